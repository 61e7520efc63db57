/*
 * What the API description says of each resource action (routes/actions.ts
 * registers their handlers): where it is called (on one object or on the
 * collection), with which methods, what it takes and what it answers. The
 * handlers check the same place and methods (routes/actionShape.ts and the
 * action files). An action registered without a description here, or a
 * description of no registered action, stops the description from being
 * built (openApiDocument.ts), so a new action cannot be left undescribed.
 * Entries named after a method (`TrashItem:DELETE`, `SecretKey:POST`, `Webhook:POST`) give
 * that method its meaning on the resource and are described by the generic
 * operations instead.
 */
import type { JsonSchema } from './jsonSchema.js'
import { schemaRef } from './jsonSchema.js'
import type { Parameter } from './parameters.js'

export interface ActionDescription {
  readonly on: 'object' | 'collection'
  readonly methods: readonly string[]
  readonly summary: string
  /** The answer's schema; `self`: the resource's own object. */
  readonly answer: JsonSchema | 'self'
  /** The resource type of the object answered, when it is not the resource's own (`$stop` answers a time record). */
  readonly answers?: string
  /** The request body: the resource's own request body (`self`), or one of its own. */
  readonly body?: 'self' | ActionBody
  /** The statuses of a success (200 when not given). */
  readonly statuses?: readonly string[]
  readonly query?: readonly Parameter[]
}

/** A request body of an action's own. */
interface ActionBody {
  readonly schema: JsonSchema
  readonly description: string
  readonly required: boolean
}

/** The body of `$confirmation` and `$setEmail`: the current password, which the user acting for themself sends (passwordRules.ts). */
const CURRENT_PASSWORD_BODY: ActionBody = {
  schema: { type: 'object', properties: { currentPassword: { type: 'string', writeOnly: true, description: 'your current password: needed when you act on your own user' } } },
  description: 'the current password, when acting for oneself',
  required: false,
}

function required(name: string, description: string): Parameter {
  return { name, in: 'query', description, required: true, schema: { type: 'string' } }
}

function optional(name: string, description: string): Parameter {
  return { name, in: 'query', description, schema: { type: 'string' } }
}

/** Entries that give a method its meaning: described by the generic create and delete. */
export const METHOD_ACTIONS: ReadonlySet<string> = new Set(['TrashItem:DELETE', 'SecretKey:POST', 'Webhook:POST'])

export const ACTION_DESCRIPTIONS: ReadonlyMap<string, ActionDescription> = new Map<string, ActionDescription>([
  ['Bill:$getNextDocNumber', { on: 'collection', methods: ['GET'], summary: 'the next bill number', answer: schemaRef('NextDocNumber') }],
  ['Bill:$getNextDocNumberPart', { on: 'collection', methods: ['GET'], summary: 'the next bill number (the number part)', answer: schemaRef('NextDocNumber') }],
  [
    'Bill:$setNextDocNumberPart',
    {
      on: 'collection',
      methods: ['POST', 'PUT'],
      summary: 'set the number the next bill gets',
      answer: schemaRef('NextDocNumber'),
      query: [optional('docNumberPart', 'the next number (or a body {"docNumberPart": N})')],
    },
  ],
  ['Impulse:$stop', { on: 'object', methods: ['POST', 'GET'], summary: 'stop a running impulse: it becomes a time record (answered)', answer: 'self', answers: 'TimeRecord' }],
  ['Impulse:$watchnotify', { on: 'object', methods: ['POST', 'GET'], summary: 'mark the impulse as watched now (watchLast)', answer: 'self' }],
  [
    'User:$confirmation',
    {
      on: 'object',
      methods: ['POST'],
      summary: 'request a password-change confirmation (step 1, signed in): 201 with its id for the user themself (with their currentPassword), 202 when it went by mail',
      answer: { anyOf: [schemaRef('CreatedId'), schemaRef('Empty')] },
      statuses: ['201', '202'],
      body: CURRENT_PASSWORD_BODY,
    },
  ],
  ['TimeRecord:$calculateprice', { on: 'collection', methods: ['POST'], summary: 'the price a time record would get (nothing is stored)', answer: schemaRef('CalculatedPrice'), body: 'self' }],
  ['TimeRecord:$updateprice', { on: 'object', methods: ['PUT', 'POST'], summary: 'recalculate and store the record’s price from the price lists', answer: 'self' }],
  [
    'TimePriceList:$findpricelist',
    {
      on: 'collection',
      methods: ['GET'],
      summary: 'the price list that applies to a combination',
      answer: 'self',
      query: ['user', 'workType', 'project', 'task', 'client'].map((name) => optional(name, `id of the ${name}`)),
    },
  ],
  ['Project:$activate', { on: 'object', methods: ['POST', 'PUT', 'GET'], summary: 'set the project active', answer: 'self' }],
  ['Project:$deactivate', { on: 'object', methods: ['POST', 'PUT', 'GET'], summary: 'set the project inactive', answer: 'self' }],
  ['TrashItem:$restore', { on: 'object', methods: ['GET', 'POST'], summary: 'restore the trashed object and its cascade group (answers the restored object)', answer: schemaRef('ObjectStub') }],
  [
    'Account:$setUrlPrefix',
    { on: 'object', methods: ['POST', 'PUT'], summary: 'move the account to another address', answer: 'self', query: [required('urlPrefix', 'the new tenant part of the host')] },
  ],
  [
    'User:$setEmail',
    {
      on: 'object',
      methods: ['POST', 'PUT'],
      summary: 'change the user’s login e-mail (one’s own with the currentPassword)',
      answer: 'self',
      query: [required('email', 'the new address')],
      body: CURRENT_PASSWORD_BODY,
    },
  ],
])
