/*
 * The schemas every part of the API shares, beside the resources' own
 * (resourceSchemas.ts): the error body of ARCHITECTURE.md §4 with the codes of the
 * catalogue (domain/errors.ts), the stub and the `{id}` reference, the
 * answers of writes and deletes, the `$metadata` document, summaries,
 * report totals, tokens, and the shapes of the fixed routes' answers. Each
 * mirrors what the code that writes the answer builds (named beside it).
 */
import { ERROR_CATALOGUE } from '../../domain/errors.js'
import { ID_PATTERN } from '../../domain/declare.js'
import { closedObject, JSON_DATE, nullable, schemaRef, type JsonSchema } from './jsonSchema.js'

const ID: JsonSchema = { type: 'string', pattern: `^${ID_PATTERN}$`, description: 'lower-case UUID' }
const STRING: JsonSchema = { type: 'string' }
const INTEGER: JsonSchema = { type: 'integer' }
const NUMBER: JsonSchema = { type: 'number' }
const BOOLEAN: JsonSchema = { type: 'boolean' }

const constraintViolation = closedObject({ entityType: STRING, field: STRING, constraint: STRING, message: STRING }, 'one violated constraint')

/** response.ts errorBody. */
const error = closedObject(
  {
    status: { type: 'integer', description: 'the HTTP status (also when suppress_response_code=true answered 200)' },
    code: { type: 'string', enum: Object.keys(ERROR_CATALOGUE), description: 'the error code (README: error codes)' },
    message: { type: 'string', description: 'what went wrong, and where' },
    description: nullable({ type: 'string' }),
    constraintViolation: { anyOf: [schemaRef('ConstraintViolation'), { type: 'null' }], description: 'the first violated constraint, or null' },
    constraintViolations: { type: 'array', items: schemaRef('ConstraintViolation') },
  },
  'the body of every error answer',
)

const totals = closedObject(
  {
    count: { type: 'integer', description: 'number of time records' },
    time: { type: 'integer', description: 'milliseconds' },
    billableTime: { type: 'integer', description: 'milliseconds of billable records' },
    effectiveTime: { type: 'integer', description: 'milliseconds of effective records' },
    money: { type: 'number', description: 'sum of the records’ prices' },
    averagePricePerHour: NUMBER,
    averageTime: { type: 'number', description: 'milliseconds per record' },
  },
  'totals of time records (routes/reports.ts)',
)

const metadataField: JsonSchema = {
  type: 'object',
  properties: {
    type: STRING,
    path: STRING,
    name: STRING,
    list: BOOLEAN,
    description: STRING,
    defaultValue: STRING,
    access: { type: 'string', enum: ['READ_WRITE', 'READ_ONLY', 'WRITE_ONLY'] },
    constraints: { type: 'array', items: closedObject({ type: STRING, details: STRING }) },
  },
  required: ['type', 'name', 'description', 'access'],
  additionalProperties: false,
}

/** One change of the history of an object or of the tenant (domain/history.ts). */
const historyItem = closedObject(
  {
    seq: { type: 'integer', description: 'the log entry’s sequence number' },
    op: { type: 'integer', description: 'the change’s place among the entry’s operations' },
    at: JSON_DATE,
    user: {
      anyOf: [schemaRef('ObjectStub'), closedObject({ id: STRING }), { type: 'null' }],
      description: 'who made the change: the user’s stub (`{id}` alone for a user the account no longer holds); null when no signed-in user made it, or when that is unknown (userKnown false)',
    },
    userKnown: { type: 'boolean', description: 'false for a change logged before the log recorded who made each write' },
    kind: { type: 'string', enum: ['created', 'updated', 'deleted', 'restored', 'removed'] },
    resource: nullable(STRING),
    type: STRING,
    id: STRING,
    version: nullable(INTEGER),
    changes: {
      anyOf: [{ type: 'array', items: closedObject({ field: STRING, old: {}, new: {} }) }, { type: 'null' }],
      description:
        'for an update: each changed field the caller may read, old and new value (dates `/Date(ms)/`, references as ids); null for the other kinds and for an update logged without its values before',
    },
  },
  'one change',
)

export const COMMON_SCHEMAS: Record<string, JsonSchema> = {
  Error: error,
  ConstraintViolation: constraintViolation,
  ObjectStub: {
    type: 'object',
    description: 'a referenced object reduced to its id, version, display name and the parts of the display name (no_expand=true), or `{id}` alone',
    properties: { id: ID, version: INTEGER, displayName: nullable(STRING) },
    required: ['id'],
  },
  Reference: { type: 'object', description: 'a reference in a request body: the id of the object', properties: { id: ID }, required: ['id'] },
  WriteResult: closedObject({ id: ID, version: INTEGER }, 'the answer of a create or update without response_object=true'),
  DeleteResult: {
    type: 'object',
    description: 'the answer of a delete: the trash item the object went to, or `deleted: true` when it is gone for good',
    properties: { id: STRING, deleted: BOOLEAN, trashItem: closedObject({ id: ID }) },
    required: ['id'],
    additionalProperties: false,
  },
  Metadata: closedObject(
    {
      type: STRING,
      path: nullable(STRING),
      fields: { type: 'array', items: metadataField },
      cascades: { type: 'array', items: closedObject({ cascadeType: { type: 'string', enum: ['REMOVE', 'PERSIST', 'MERGE'] }, objectTypes: { type: 'array', items: STRING } }) },
    },
    'the $metadata document of a resource',
  ),
  Summary: {
    type: 'array',
    description: 'one entry per group (`*` when not grouped); each function’s value as text',
    items: closedObject({ key: STRING, summaries: { type: 'array', items: closedObject({ name: STRING, value: STRING }) } }),
  },
  Totals: totals,
  TotalsByGroup: { type: 'object', description: 'totals by group key (`*` when not grouped)', additionalProperties: schemaRef('Totals') },
  GroupedTotals: { type: 'array', items: closedObject({ key: STRING, displayName: STRING, totals: schemaRef('Totals') }) },
  TrendedTotals: { type: 'array', description: 'the defined range first, then each earlier period', items: schemaRef('Totals') },
  Slices: { type: 'array', items: closedObject({ offset: INTEGER, time: { type: 'integer', description: 'milliseconds' } }) },
  TokenPair: closedObject({ token: STRING, expiration: JSON_DATE, refreshToken: STRING, refreshExpiration: JSON_DATE }, 'an access token and the refresh token that replaces it'),
  LoggedOut: closedObject({ loggedOut: BOOLEAN }),
  Exists: closedObject({ exists: BOOLEAN }),
  FoundUrl: closedObject({ url: nullable(STRING) }, 'the tenant URL of the account, or null'),
  CreatedId: closedObject({ id: STRING }),
  Empty: closedObject({}),
  HistoryItem: historyItem,
  History: closedObject(
    {
      availableFrom: {
        anyOf: [closedObject({ seq: INTEGER, at: JSON_DATE }), { type: 'null' }],
        description: 'the oldest log entry the account’s history still holds (older ones are pruned after LOG_RETENTION_MS)',
      },
      items: { type: 'array', items: schemaRef('HistoryItem'), description: 'newest first' },
      next: { anyOf: [STRING, { type: 'null' }], description: 'the address of the next page (the same request with `before`); null when the log holds nothing older' },
    },
    'a page of history',
  ),
  RemovedObject: closedObject({ id: STRING, deleted: BOOLEAN }),
  UploadedFile: closedObject(
    { id: ID, version: INTEGER, fileName: STRING, contentType: STRING, contentSize: INTEGER, createdAt: JSON_DATE, updatedAt: JSON_DATE, displayName: STRING },
    'an uploaded file’s metadata (domain/files.ts renderFileMetadata)',
  ),
  CalculatedPrice: closedObject({ price: nullable(NUMBER), unitPrice: nullable(NUMBER) }),
  NextDocNumber: closedObject({ docNumber: INTEGER, docNumberPart: INTEGER }),
  StorageList: { type: 'array', items: closedObject({ itemKey: STRING, publicScope: BOOLEAN, contentType: STRING }) },
  AccessTokenList: {
    type: 'array',
    items: closedObject({ id: STRING, displayName: STRING, createdAt: JSON_DATE, expiration: JSON_DATE, refreshExpiration: nullable(JSON_DATE), current: BOOLEAN }),
  },
  RevokedAccessToken: closedObject({ id: STRING, deleted: BOOLEAN, loggedOut: BOOLEAN }),
  ProductSeats: closedObject({ product: STRING, licenseLimit: nullable(INTEGER), used: INTEGER, free: nullable(INTEGER) }),
  UserProductSeats: closedObject({
    product: STRING,
    licenseLimit: nullable(INTEGER),
    used: INTEGER,
    free: nullable(INTEGER),
    granted: { type: 'boolean', description: 'whether the user holds a seat' },
  }),
  AllowedProducts: closedObject({ products: { type: 'array', items: STRING } }),
  BatchRequest: {
    type: 'array',
    maxItems: 100,
    items: {
      type: 'object',
      properties: {
        id: { type: 'string', description: 'names the item’s answer' },
        method: STRING,
        path: { type: 'string', description: 'the path with /v1 and a query, e.g. /v1/time/projects?$top=5' },
        headers: { type: 'string', description: 'header lines; without them the batch request’s headers are used' },
        body: { description: 'the body as text (an object is sent as its JSON)' },
        transaction: { type: 'string', description: 'items with the same value succeed or fail together' },
      },
      required: ['id', 'method', 'path'],
    },
  },
  BatchAnswer: { type: 'array', items: closedObject({ id: STRING, code: INTEGER, headers: STRING, body: STRING }) },
}
