/*
 * The error catalogue (ARCHITECTURE.md §4): every error the service answers is an
 * ApiError carrying one of these codes. The HTTP layer turns it into the
 * error body {status, code, message, description, constraintViolation,
 * constraintViolations}; anything that is not an ApiError is a bug (9001),
 * such as a failed internal assertion (src/assert.ts).
 */

export const ERROR_CATALOGUE = {
  'TL01-1001': { status: 401, when: 'wrong credentials or API key at login' },
  'TL01-1002': { status: 400, when: 'token missing' },
  'TL01-1005': { status: 401, when: 'unknown tenant' },
  'TL01-1006': { status: 400, when: 'confirmation id invalid' },
  'TL01-1007': { status: 401, when: 'account or user not confirmed' },
  'TL01-1008': { status: 403, when: 'access denied' },
  'TL01-1010': { status: 401, when: 'token invalid or expired' },
  'TL01-1011': { status: 401, when: 'refresh token invalid, expired or already used' },
  'TL01-1101': { status: 404, when: 'object not found' },
  'TL01-1102': { status: 409, when: 'object already exists' },
  'TL01-1103': { status: 400, when: 'operation not allowed' },
  'TL01-1104': { status: 412, when: 'validation error (constraint violation)' },
  'TL01-1105': { status: 400, when: 'wrong parameters' },
  'TL01-1106': { status: 412, when: 'illegal state' },
  'TL01-1107': { status: 409, when: 'version stale' },
  'TL01-1108': { status: 424, when: 'batch transaction failed because another item of its group failed' },
  'TL01-1109': { status: 413, when: 'file size limit exceeded' },
  'TL01-1110': { status: 412, when: 'If-Match names a version the object is not at' },
  'TL01-1111': { status: 410, when: 'the change feed cannot resume from there: the log no longer holds it' },
  'TL01-1112': { status: 400, when: 'Idempotency-Key malformed (empty, over 255 characters, not printable ASCII) or not taken by this call' },
  'TL01-1113': { status: 422, when: 'Idempotency-Key already used for another request (method, path, query or body differ)' },
  'TL01-1114': { status: 409, when: 'the first request with this Idempotency-Key is still in flight' },
  'TL01-9001': { status: 500, when: 'internal error (a bug), logged with a request id' },
  'TL01-9002': { status: 412, when: 'limit exceeded (list, batch, storage size, $filter size)' },
  'TL01-9003': { status: 404, when: 'resource path not found' },
  'TL01-9004': { status: 405, when: 'method not allowed on this path' },
  'TL01-9005': { status: 415, when: 'request content type not supported' },
  'TL01-9006': { status: 413, when: 'request body larger than the limit' },
  'TL01-9007': { status: 406, when: 'answer format not offered here (an export asked of an answer that is no list, summary or report)' },
  'TL01-9010': { status: 429, when: 'too many requests' },
  'TL01-9011': { status: 503, when: 'engine cannot accept writes now, or the tenant has too many requests waiting (TENANT_MAILBOX_MAX_REQUESTS)' },
} as const

export type ErrorCode = keyof typeof ERROR_CATALOGUE

export interface ConstraintViolation {
  entityType: string
  field: string
  constraint: string
  message: string
}

export class ApiError extends Error {
  readonly status: number
  readonly headers: Record<string, string>

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly description: string | null = null,
    readonly constraintViolations: readonly ConstraintViolation[] = [],
    headers: Record<string, string> = {},
  ) {
    super(message)
    this.status = ERROR_CATALOGUE[code].status
    this.headers = headers
  }
}

export const notFound = (type: string, id: string): ApiError => new ApiError('TL01-1101', `${type} with id '${id}' not found`)

export const wrongParameter = (message: string): ApiError => new ApiError('TL01-1105', message)

export const accessDenied = (message = 'access denied'): ApiError => new ApiError('TL01-1008', message)

export const violation = (violations: ConstraintViolation[]): ApiError => new ApiError('TL01-1104', violations.map((item) => item.message).join('; '), null, violations)
