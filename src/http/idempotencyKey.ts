/*
 * The `Idempotency-Key` request header (IETF draft-ietf-httpapi-idempotency-key-header,
 * Stripe's scheme): a client names a write with a key of its choosing, so
 * that a retry of the same request — after a timeout, a dropped connection,
 * a crash of the server — answers what the first one answered instead of
 * writing again (keyedWrite.ts runs it).
 *
 * Read on writing methods only (POST, PUT, PATCH, DELETE; a GET is safe to
 * retry without one). The value is taken as it is sent, compared byte for
 * byte: a draft-style quoted string (`"8e03…"`) and Stripe's bare token
 * are both keys, different ones. It is 1 to MAX_IDEMPOTENCY_KEY_CHARS
 * printable ASCII characters; anything else (empty, longer, a control or
 * non-ASCII character) is refused with 400 TL01-1112 before anything runs.
 *
 * A key belongs to the request it was first sent with: its fingerprint is
 * the SHA-256 of the method, the path, the query (but `token`, a credential
 * a retry may have renewed) and the body's bytes. The same key with another
 * fingerprint is a client's mistake (422, keyedWrite.ts).
 */
import crypto from 'node:crypto'
import { ApiError } from '../domain/errors.js'
import type { ApiRequest } from './request.js'

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key'
/** Set on an answer that is a kept answer given again. */
export const REPLAYED_HEADER = 'Idempotent-Replayed'
export const MAX_IDEMPOTENCY_KEY_CHARS = 255

const HEADER_LOWER = IDEMPOTENCY_KEY_HEADER.toLowerCase()
const PRINTABLE_ASCII = /^[\x20-\x7e]+$/

function isWritingMethod(method: string): boolean {
  return method === 'POST' || method === 'PUT' || method === 'PATCH' || method === 'DELETE'
}

/** The key a writing request names; undefined when it names none or is no write. 400 TL01-1112 for a malformed key. */
export function idempotencyKeyOf(request: ApiRequest): string | undefined {
  const value = request.headers.get(HEADER_LOWER)
  if (value === undefined || !isWritingMethod(request.method)) return undefined
  const key = value.trim()
  if (key === '') throw new ApiError('TL01-1112', `${IDEMPOTENCY_KEY_HEADER} is empty: send 1 to ${MAX_IDEMPOTENCY_KEY_CHARS} printable ASCII characters`)
  if (key.length > MAX_IDEMPOTENCY_KEY_CHARS) {
    throw new ApiError('TL01-1112', `${IDEMPOTENCY_KEY_HEADER} has ${key.length} characters, at most ${MAX_IDEMPOTENCY_KEY_CHARS} are taken`)
  }
  if (!PRINTABLE_ASCII.test(key)) throw new ApiError('TL01-1112', `${IDEMPOTENCY_KEY_HEADER} holds a character that is not printable ASCII (U+0020 to U+007E)`)
  return key
}

/** The SHA-256 of what makes the request the same request: method, path, query (but `token`) and body. */
export function requestFingerprint(request: ApiRequest): string {
  const query = [...request.query].filter(([name]) => name !== 'token')
  return crypto
    .createHash('sha256')
    .update(JSON.stringify([request.method, request.segments, query]))
    .update('\n')
    .update(request.body)
    .digest('hex')
}
