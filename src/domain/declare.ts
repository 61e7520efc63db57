/*
 * The builders resource declarations are written with (domain/resources/),
 * so that a declaration reads like the tables of the spec: `field.string(…)`,
 * `field.ref(…)`, the constraint helpers, the fields every stored object
 * has, and `declareResource`, which fills in every default of a ResourceDecl
 * (schema.ts: what a declaration is) and checks what can be checked at once.
 */
import { assertionFailed } from '../assert.js'
import type { DisplayContext, Rec } from './record.js'
import type { Constraint, FieldDecl, ResourceDecl } from './schema.js'

export interface FieldOptions {
  access?: FieldDecl['access']
  required?: boolean
  defaultValue?: string | number | boolean
  constraints?: Constraint[]
  indexed?: boolean
  rangeIndexed?: boolean
  inStub?: boolean
  computed?: boolean
  hashed?: boolean
  setOnce?: boolean
  /** A derived field: never stored nor read from input; implies computed. */
  derive?: FieldDecl['derive']
  list?: boolean
}

/** The most references a list field holds. */
export const MAX_LIST_REFS = 100

function makeField(name: string, type: string, ref: string | undefined, description: string, options: FieldOptions): FieldDecl {
  const constraints: Constraint[] = [...(options.required ? [{ type: 'NotNull' } as const] : []), ...(options.constraints ?? [])]
  return {
    name,
    type,
    ...(ref === undefined ? {} : { ref }),
    list: options.list ?? false,
    access: options.access ?? 'READ_WRITE',
    description,
    ...(options.defaultValue === undefined ? {} : { defaultValue: options.defaultValue }),
    constraints,
    indexed: options.indexed ?? (ref !== undefined && options.list !== true),
    rangeIndexed: options.rangeIndexed ?? false,
    inStub: options.inStub ?? false,
    computed: options.computed ?? options.derive !== undefined,
    hashed: options.hashed ?? false,
    setOnce: options.setOnce ?? false,
    ...(options.derive === undefined ? {} : { derive: options.derive }),
  }
}

export const field = {
  string: (name: string, description: string, options: FieldOptions = {}) => makeField(name, 'String', undefined, description, options),
  boolean: (name: string, description: string, options: FieldOptions = {}) => makeField(name, 'Boolean', undefined, description, options),
  long: (name: string, description: string, options: FieldOptions = {}) => makeField(name, 'Long', undefined, description, options),
  integer: (name: string, description: string, options: FieldOptions = {}) => makeField(name, 'Integer', undefined, description, options),
  double: (name: string, description: string, options: FieldOptions = {}) => makeField(name, 'Double', undefined, description, options),
  date: (name: string, description: string, options: FieldOptions = {}) => makeField(name, 'Date', undefined, description, options),
  ref: (name: string, type: string, description: string, options: FieldOptions = {}) => makeField(name, type, type, description, options),
  /** A list of references to `type` (see FieldDecl.list). */
  refList: (name: string, type: string, description: string, options: FieldOptions = {}) => makeField(name, type, type, description, Object.assign({}, options, { list: true, indexed: false })),
}

export const size = (min: number, max: number): Constraint => ({ type: 'Size', min, max })
export const min = (value: number): Constraint => ({ type: 'Min', value })
export const max = (value: number): Constraint => ({ type: 'Max', value })
export const oneOf = (...values: string[]): Constraint => ({ type: 'Enum', values })
export const pattern = (regexp: string, example?: string): Constraint => (example === undefined ? { type: 'Pattern', regexp } : { type: 'Pattern', regexp, example })
export const email: Constraint = { type: 'Email' }
export const ianaTimeZone: Constraint = { type: 'TimeZone' }

export const ID_PATTERN = '[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}'

/** Fields every stored object has. */
function commonFields(): FieldDecl[] {
  return [
    field.string('id', 'identifier of the object', { required: true, constraints: [pattern(ID_PATTERN)], inStub: true }),
    field.long('version', 'object version number, +1 per change', { inStub: true }),
    field.date('createdAt', 'when the object was created', { access: 'READ_ONLY' }),
    field.date('updatedAt', 'when the object was last changed', { access: 'READ_ONLY' }),
    field.string('displayName', 'human-readable description of the object', { access: 'READ_ONLY', inStub: true, computed: true }),
    // Read-write as the spec declares it: null may be written (a GET's body PUT back), a trash item only by DELETE (input.ts).
    field.ref('trashItem', 'TrashItem', 'an object is in the trash when a trash item is set', { indexed: false }),
  ]
}

/** The external-sync fields that Project, Task, TimeRecord, Impulse, Client and WorkType carry. */
export function externalSyncFields(): FieldDecl[] {
  return [
    field.ref('externalSystem', 'ExternalSystem', 'system that maintains the object'),
    field.string('externalResourceId', 'identifier in an external system'),
    field.string('externalBrowsableUrl', 'link in an external system'),
    field.boolean('externalSynced', 'synced with external system', { access: 'WRITE_ONLY' }),
    field.date('externalSyncedAt', 'set when externalSynced is true', { access: 'READ_ONLY' }),
  ]
}

/** `created` of the original service (Account, User, Access): createdAt under its name, read-only, never stored twice. */
export function createdField(): FieldDecl {
  return field.date('created', 'when the object was created (the same instant as createdAt)', { access: 'READ_ONLY', derive: (rec) => rec.createdAt })
}

export interface ResourceOptions {
  type: string
  path: string | null
  aliases?: string[]
  description: string
  fields: FieldDecl[]
  cascades?: string[]
  savedWith?: string[]
  displayName: (rec: Rec, context: DisplayContext) => string
  internal?: boolean
  changeEvents?: NonNullable<ResourceDecl['changeEvents']>
  /** Include the common fields (id, version, dates, displayName, trashItem); default true. */
  common?: boolean
  /** Default: only superusers write. */
  writeRule?: ResourceDecl['writeRule']
  readRule?: ResourceDecl['readRule']
  revocableBy?: 'managersOfUser'
  removedForGood?: boolean
  unique?: string[][]
  creatable?: boolean
  updatable?: boolean
  removable?: boolean
  appends?: ResourceDecl['appends']
  inner?: ResourceDecl['inner']
  sums?: ResourceDecl['sums']
  deriveOnWrite?: ResourceDecl['deriveOnWrite']
  onCreate?: ResourceDecl['onCreate']
  onChange?: ResourceDecl['onChange']
  standsFor?: ResourceDecl['standsFor']
  recordCheck?: ResourceDecl['recordCheck']
  indexOrder?: string
  lockedByDate?: string
  globalIndex?: NonNullable<ResourceDecl['globalIndex']>
  directoryMarker?: NonNullable<ResourceDecl['directoryMarker']>
  writeCheck?: NonNullable<ResourceDecl['writeCheck']>
  writeOptions?: ResourceDecl['writeOptions']
}

export function declareResource(options: ResourceOptions): ResourceDecl {
  const fields = [...(options.common === false ? [] : commonFields()), ...options.fields]
  const fieldsByName = new Map(fields.map((decl) => [decl.name, decl]))
  if (fieldsByName.size !== fields.length) assertionFailed(`resource ${options.type} declares a field twice`)
  if (options.indexOrder !== undefined && fieldsByName.get(options.indexOrder)?.type !== 'Date') {
    assertionFailed(`resource ${options.type}: indexOrder ${options.indexOrder} is not a date field`)
  }
  if (options.lockedByDate !== undefined && fieldsByName.get(options.lockedByDate)?.type !== 'Date') {
    assertionFailed(`resource ${options.type}: lockedByDate ${options.lockedByDate} is not a date field`)
  }
  const lastSegment = options.path?.split('/').at(-1) ?? options.type.toLowerCase()
  return {
    type: options.type,
    path: options.path,
    aliases: options.aliases ?? [],
    description: options.description,
    fields,
    fieldsByName,
    cascades: options.cascades ?? [],
    savedWith: options.savedWith ?? [],
    displayName: options.displayName,
    xmlItemName: options.type.charAt(0).toLowerCase() + options.type.slice(1),
    xmlListName: lastSegment,
    internal: options.internal ?? false,
    changeEvents: options.changeEvents ?? null,
    writeRule: options.writeRule ?? 'superuser',
    readRule: options.readRule ?? 'everyone',
    revocableBy: options.revocableBy ?? null,
    removedForGood: options.removedForGood ?? false,
    unique: options.unique ?? [],
    creatable: options.creatable ?? true,
    updatable: options.updatable ?? true,
    removable: options.removable ?? true,
    appends: options.appends ?? [],
    inner: options.inner ?? [],
    sums: options.sums ?? [],
    indexOrder: options.indexOrder ?? null,
    lockedByDate: options.lockedByDate ?? null,
    globalIndex: options.globalIndex ?? null,
    directoryMarker: options.directoryMarker ?? null,
    writeCheck: options.writeCheck ?? null,
    writeOptions: options.writeOptions ?? [],
    ...(options.deriveOnWrite === undefined ? {} : { deriveOnWrite: options.deriveOnWrite }),
    ...(options.onCreate === undefined ? {} : { onCreate: options.onCreate }),
    ...(options.onChange === undefined ? {} : { onChange: options.onChange }),
    ...(options.standsFor === undefined ? {} : { standsFor: options.standsFor }),
    ...(options.recordCheck === undefined ? {} : { recordCheck: options.recordCheck }),
  }
}

/** The display name of the user a record belongs to (its `user` reference). */
export function userDisplayName(rec: Rec, context: DisplayContext): string {
  return context.displayNameOf('User', rec.user)
}

/** "lastName firstName" of a person-like record, skipping missing parts. */
export function personName(rec: Rec): string {
  return [rec.lastName, rec.firstName].filter((part) => typeof part === 'string' && part !== '').join(' ')
}
