/*
 * What the API description says of each fixed route of the route table
 * (routeTable.ts), keyed by method and pattern: a summary, its tag, the
 * credentials it takes, its query parameters, body and answer. The route
 * table itself gives the path, the method, the address (public or tenant)
 * and whether a token is needed; openApiDocument.ts joins the two and
 * refuses to build when a route has no description here or a description
 * names no route, so the table and the description cannot drift apart.
 * A route whose pattern captures a name from a closed set (the reports)
 * is described once per name (`expand`).
 */
import { schemaRef, type JsonSchema } from './jsonSchema.js'
import { answers, dataAnswer, exportable, jsonBody, LOGIN, OPEN, WITH_API_KEY } from './operations.js'
import { parameterRef, type Parameter } from './parameters.js'
import type { FixedRouteDescription } from './fixedRouteDescription.js'
import { IMPORT_DESCRIPTIONS } from './importDescriptions.js'
import { CALENDAR_DESCRIPTIONS } from './calendarDescriptions.js'
import { HISTORY_DESCRIPTIONS } from './historyDescriptions.js'

export type { FixedRouteDescription }

function required(name: string, description: string, schema: JsonSchema = { type: 'string' }): Parameter {
  return { name, in: 'query', description, required: true, schema }
}

const FORMAT = [parameterRef('format'), parameterRef('suppress_response_code'), parameterRef('dates')]
const API_KEY = [parameterRef('apikey')]

function ok(description: string, schema: JsonSchema, status = '200'): Record<string, unknown> {
  return answers({ [status]: dataAnswer(description, schema) })
}

/** A report's answer: also a CSV or XLSX file. */
function report(description: string, schema: JsonSchema): Record<string, unknown> {
  return answers({ '200': exportable(dataAnswer(description, schema)) })
}

const FILE_BODY = { description: 'the file’s bytes, with its Content-Type', required: true, content: { '*/*': { schema: { type: 'string', format: 'binary' } } } }
const FILE_ANSWER = answers({ '200': { description: 'the file, with its content type', content: { '*/*': { schema: { type: 'string', format: 'binary' } } } } })
const FILE_WRITTEN = answers({
  '201': dataAnswer('stored: {id, version}, or the metadata with response_object=true', { anyOf: [schemaRef('WriteResult'), schemaRef('UploadedFile')] }),
  '200': dataAnswer('replaced: {id, version}, or the metadata with response_object=true', { anyOf: [schemaRef('WriteResult'), schemaRef('UploadedFile')] }),
})

function fileRoutes(owner: string, file: string): [string, FixedRouteDescription][] {
  const base = `${owner}/:id/${file}`
  return [
    [
      `POST ${base}/upload`,
      { summary: `upload the ${file}`, tag: 'Files', query: [required('filename', 'the file’s name'), parameterRef('response_object'), ...FORMAT], body: FILE_BODY, answers: FILE_WRITTEN },
    ],
    [`GET ${base}/download`, { summary: `download the ${file}`, tag: 'Files', answers: FILE_ANSWER }],
    [`GET ${base}`, { summary: `the ${file}’s metadata`, tag: 'Files', query: FORMAT, answers: ok('name, content type and size', schemaRef('UploadedFile')) }],
    [`DELETE ${base}`, { summary: `remove the ${file}`, tag: 'Files', query: FORMAT, answers: ok('removed', schemaRef('RemovedObject')) }],
  ]
}

const REPORT_RANGE = [parameterRef('range'), parameterRef('range_from'), parameterRef('range_to'), parameterRef('offset')]

/** The reports by name (`time/reports/:name`). */
export const REPORT_DESCRIPTIONS: ReadonlyMap<string, FixedRouteDescription> = new Map<string, FixedRouteDescription>([
  [
    'readtotals',
    {
      summary: 'totals of time records by group',
      tag: 'Reports',
      query: [parameterRef('groupBy'), parameterRef('filter'), ...REPORT_RANGE, ...FORMAT],
      answers: report('totals by group', schemaRef('TotalsByGroup')),
    },
  ],
  [
    'groupedtotals',
    {
      summary: 'totals by group, each group named',
      tag: 'Reports',
      query: [parameterRef('groupBy'), parameterRef('filter'), ...REPORT_RANGE, ...FORMAT],
      answers: report('one entry per group', schemaRef('GroupedTotals')),
    },
  ],
  [
    'singletotals',
    { summary: 'totals of the time records of a range', tag: 'Reports', query: [parameterRef('filter'), ...REPORT_RANGE, ...FORMAT], answers: report('the totals', schemaRef('Totals')) },
  ],
  [
    'trendedtotals',
    {
      summary: 'totals of a range and of earlier ones',
      tag: 'Reports',
      query: [parameterRef('filter'), ...REPORT_RANGE, parameterRef('depth'), ...FORMAT],
      answers: report('the range first, then each earlier period', schemaRef('TrendedTotals')),
    },
  ],
  [
    'singleslices',
    {
      summary: 'time per slice of a range',
      tag: 'Reports',
      query: [parameterRef('filter'), ...REPORT_RANGE, parameterRef('slice_by'), ...FORMAT],
      answers: report('one entry per slice', schemaRef('Slices')),
    },
  ],
])

const STORAGE_SCOPE = { description: '`private` (the default: the caller’s own) or `public` (shared by the tenant’s users)' }

export const FIXED_ROUTE_DESCRIPTIONS: ReadonlyMap<string, FixedRouteDescription> = new Map<string, FixedRouteDescription>([
  [
    'GET register/checkurl',
    {
      summary: 'is an account address taken?',
      tag: 'Registration',
      security: WITH_API_KEY,
      query: [required('url', 'the tenant part of the host'), ...API_KEY, ...FORMAT],
      answers: ok('whether it exists', schemaRef('Exists')),
    },
  ],
  [
    'GET register/checkemail',
    {
      summary: 'is an e-mail address taken?',
      tag: 'Registration',
      security: WITH_API_KEY,
      query: [required('email', 'the address'), ...API_KEY, ...FORMAT],
      answers: ok('whether it exists', schemaRef('Exists')),
    },
  ],
  [
    'GET register/findurl',
    {
      summary: 'the account address of an e-mail',
      tag: 'Registration',
      security: WITH_API_KEY,
      query: [required('email', 'the address'), ...API_KEY, ...FORMAT],
      answers: ok('the tenant URL, or null', schemaRef('FoundUrl')),
    },
  ],
  [
    'POST register/signup',
    {
      summary: 'sign up a new account and its owner',
      tag: 'Registration',
      security: WITH_API_KEY,
      query: [...API_KEY, ...FORMAT],
      body: jsonBody(
        {
          type: 'object',
          properties: {
            // The account's urlPrefix is read-only on the account, but sign-up chooses it (routes/registration.ts).
            account: {
              allOf: [
                schemaRef('AccountInput'),
                { type: 'object', properties: { urlPrefix: { type: 'string', description: 'the tenant part of the host, chosen once at sign-up' } }, required: ['urlPrefix'] },
              ],
            },
            owner: schemaRef('UserInput'),
          },
          required: ['account', 'owner'],
          examples: [{ account: { name: 'Acme Ltd', urlPrefix: 'acme' }, owner: { firstName: 'Olive', lastName: 'Owner', email: 'olive@acme.test', password: 'a long password' } }],
        },
        'the account (name, urlPrefix) and its owner (name, e-mail, password)',
      ),
      answers: ok('the new account’s id, to confirm', schemaRef('CreatedId'), '201'),
    },
  ],
  [
    'POST auth/confirm/:id',
    {
      summary: 'confirm a sign-up (tenant URL) or a password change (public URL)',
      description:
        'On the tenant URL: confirms the account with the id sign-up answered. On the public URL: step 2 of a password change, `Authorization: Basic` carrying base64 of `:<new password>` (an empty user name).',
      tag: 'Authentication',
      security: WITH_API_KEY,
      query: [...API_KEY, ...FORMAT],
      answers: ok('the confirmed account, or the user whose password changed ({id, version})', { anyOf: [schemaRef('Account'), schemaRef('WriteResult')] }),
    },
  ],
  [
    'GET auth/login',
    {
      summary: 'log in: an access token and a refresh token',
      description: '`Authorization: Basic` with e-mail and password, or a secret key as the user name and no password.',
      tag: 'Authentication',
      security: LOGIN,
      query: [...API_KEY, ...FORMAT],
      answers: ok('the tokens and when they expire', schemaRef('TokenPair')),
    },
  ],
  [
    'GET auth/refreshtoken',
    {
      summary: 'a new token pair for a refresh token (used once)',
      tag: 'Authentication',
      security: WITH_API_KEY,
      query: [required('refresh_token', 'the refresh token'), ...API_KEY, ...FORMAT],
      answers: ok('the new tokens', schemaRef('TokenPair')),
    },
  ],
  ['GET auth/logout', { summary: 'end the session of this token', tag: 'Authentication', query: FORMAT, answers: ok('logged out', schemaRef('LoggedOut')) }],
  ['DELETE auth/token', { summary: 'end the session of this token', tag: 'Authentication', query: FORMAT, answers: ok('logged out', schemaRef('LoggedOut')) }],
  [
    'POST batch',
    {
      summary: 'run up to 100 requests in one call',
      description: 'Each item runs in its own transaction unless items share a `transaction`; a failed item is reported in its own `code`, the batch answers 200.',
      tag: 'Batch',
      query: FORMAT,
      body: jsonBody(schemaRef('BatchRequest'), 'the requests'),
      answers: ok('one answer per item', schemaRef('BatchAnswer')),
    },
  ],
  [
    'POST users/requestconfirmation',
    {
      summary: 'request a password change by e-mail (step 1, no token)',
      tag: 'Authentication',
      security: WITH_API_KEY,
      query: [required('email', 'the user’s e-mail'), ...API_KEY, ...FORMAT],
      answers: ok('accepted: the confirmation goes by mail', schemaRef('Empty'), '202'),
    },
  ],
  [
    'POST users/@self/secretkeys',
    {
      summary: 'create a secret key (shown this once)',
      tag: 'SecretKey',
      query: FORMAT,
      body: jsonBody(schemaRef('SecretKeyInput'), 'its name', false),
      answers: ok('the key with its secretKey', schemaRef('SecretKey'), '201'),
    },
  ],
  [
    'GET users/@self/secretkeys',
    { summary: 'list the caller’s secret keys', tag: 'SecretKey', query: FORMAT, answers: ok('the keys (without their secret)', { type: 'array', items: schemaRef('SecretKey') }) },
  ],
  ['DELETE users/@self/secretkeys/:id', { summary: 'delete a secret key', tag: 'SecretKey', query: FORMAT, answers: ok('deleted', schemaRef('RemovedObject')) }],
  ['GET users/@self/secretkeys/$metadata', { summary: 'the metadata document of SecretKey', tag: 'SecretKey', query: FORMAT, answers: ok('the document', schemaRef('Metadata')) }],
  ['GET users/@self/secretkeys/$dummy', { summary: 'a sample SecretKey', tag: 'SecretKey', query: FORMAT, answers: ok('a sample', { type: 'object' }) }],
  ['GET time/reports/:name', { summary: 'reports', tag: 'Reports', answers: {} }],
  ['GET storage/:group', { summary: 'list the entries of a storage group', tag: 'Storage', query: FORMAT, answers: ok('the entries the caller sees', schemaRef('StorageList')) }],
  ...(['', '/:scope'] as const).flatMap((tail): [string, FixedRouteDescription][] => [
    [
      `GET storage/:group/:key${tail}`,
      {
        summary: `read a storage entry${tail === '' ? '' : ' of a scope'}`,
        tag: 'Storage',
        answers: answers({ '200': { description: 'the text as stored, with its content type', content: { '*/*': { schema: { type: 'string' } } } } }),
      },
    ],
    [
      `POST storage/:group/:key${tail}`,
      {
        summary: `write a storage entry${tail === '' ? '' : ' of a scope'} (a second write overwrites)`,
        description: tail === '' ? undefined : `scope: ${STORAGE_SCOPE.description}`,
        tag: 'Storage',
        query: FORMAT,
        body: {
          description: 'up to 16384 characters; its Content-Type is stored',
          required: true,
          content: { 'text/plain': { schema: { type: 'string', maxLength: 16384 } }, 'application/json': { schema: {} } },
        },
        answers: answers({ '201': dataAnswer('created', schemaRef('WriteResult')), '200': dataAnswer('overwritten', schemaRef('WriteResult')) }),
      },
    ],
    [`DELETE storage/:group/:key${tail}`, { summary: `remove a storage entry${tail === '' ? '' : ' of a scope'}`, tag: 'Storage', query: FORMAT, answers: ok('removed', schemaRef('RemovedObject')) }],
  ]),
  ...fileRoutes('users', 'signature'),
  ...fileRoutes('accounts', 'logo'),
  ...fileRoutes('time/expenses', 'receipt'),
  ['GET users/@self/accesstokens', { summary: 'the caller’s sessions', tag: 'Authentication', query: FORMAT, answers: ok('the sessions, oldest first', schemaRef('AccessTokenList')) }],
  ['DELETE users/@self/accesstokens/:id', { summary: 'end one of the caller’s sessions', tag: 'Authentication', query: FORMAT, answers: ok('ended', schemaRef('RevokedAccessToken')) }],
  ['GET accesses/product/:product/$free', { summary: 'seats of a product: limit, used, free', tag: 'Access', query: FORMAT, answers: ok('the seats', schemaRef('ProductSeats')) }],
  ['GET accesses/products/$allowed', { summary: 'the products the caller may use', tag: 'Access', query: FORMAT, answers: ok('the products', schemaRef('AllowedProducts')) }],
  [
    'GET users/:id/accesses/product/:product/$free',
    { summary: 'seats of a product, and whether the user holds one', tag: 'Access', query: FORMAT, answers: ok('the seats', schemaRef('UserProductSeats')) },
  ],
  ['GET users/:id/accesses/products/$allowed', { summary: 'the products a user may use', tag: 'Access', query: FORMAT, answers: ok('the products', schemaRef('AllowedProducts')) }],
  [
    'GET users/:id/accesses/@exceeded',
    { summary: 'a user’s accesses beyond the license limit', tag: 'Access', query: FORMAT, answers: ok('the accesses', { type: 'array', items: schemaRef('Access') }) },
  ],
  [
    'GET changes',
    {
      summary: 'the change feed: every change the caller may see, live, as a WebSocket or as Server-Sent Events',
      description:
        'A WebSocket when the request asks to upgrade (each event one text message), Server-Sent Events with `Accept: text/event-stream` (`id: <seq>.<op>`, `event: change`, `data: <event>`). Each event: `{seq, op, at, resource, type, id, kind, version, object}`, `kind` one of created, updated, deleted (to the trash), restored, removed. `since` (or Last-Event-ID) resumes after that event from the log, with no gap and no duplicate. The stream ends with a WebSocket close code (or an `event: end` whose data says it): 1001 server stopping, 4401 access lost, 4409 too slow, 4410 history gone (reload), 4503 tenant moved.',
      tag: 'Changes',
      query: [
        { name: 'resources', in: 'query', description: 'comma-separated resource paths (as under /v1, or `storage`); all when absent', schema: { type: 'string' } },
        { name: '$filter', in: 'query', description: 'an OData filter on the objects of each resource named in `resources`', schema: { type: 'string' } },
        { name: 'since', in: 'query', description: 'resume after this event id: `<seq>` or `<seq>.<op>`', schema: { type: 'string', pattern: '^\\d+(\\.\\d+)?$' } },
        { name: 'fields', in: 'query', description: '`stub`: each object as its stub', schema: { type: 'string', enum: ['stub'] } },
        { name: 'no_expand', in: 'query', description: 'references as stubs, as on GET', schema: { type: 'boolean' } },
        parameterRef('dates'),
      ],
      answers: answers({
        '101': { description: 'switched to the WebSocket protocol' },
        '200': { description: 'the event stream', content: { 'text/event-stream': { schema: { type: 'string' } } } },
        '410': { description: 'TL01-1111: the log no longer holds the changes after `since`: reload, then connect without it' },
      }),
    },
  ],
  ...IMPORT_DESCRIPTIONS,
  ...CALENDAR_DESCRIPTIONS,
  ...HISTORY_DESCRIPTIONS,
  [
    'GET openapi',
    {
      documentedPath: '/openapi.json',
      summary: 'this description of the API (OpenAPI 3.1)',
      tag: 'Reference',
      security: OPEN,
      query: [
        {
          name: 'tags',
          in: 'query',
          description:
            'a part of the description: the operations of these tags (comma-separated) with the components they use; empty: the outline without operations (the /docs page loads a tag’s part when it is opened)',
          schema: { type: 'string' },
        },
      ],
      answers: answers({ '200': { description: 'the OpenAPI document, or the part asked for', content: { 'application/json': { schema: { type: 'object' } } } } }),
    },
  ],
])
