/*
 * Reads a request's body on uWS, up to its limit: from Content-Length up
 * front and again while reading (limitedBody.ts). Each chunk is copied (uWS
 * frees it after the callback); a request without a body gets zero bytes at
 * once. A routed request's limit is its path's: uploads (paths ending in
 * /upload) may carry a file up to MAX_FILE_BYTES, imports (import/{source})
 * up to MAX_IMPORT_BYTES, every other body up to MAX_BODY_BYTES; a body over
 * it is refused with the limit's own code. A refused body of a declared
 * length is read to its end and thrown away by uWS (nothing of it is kept),
 * so the answer reaches a client behind a proxy; one without a length has
 * its connection closed (limitedBody.ts: drainsRefusedBody).
 */
import type { Config } from '../config.js'
import { ApiError } from '../domain/errors.js'
import { answerFailureSafely } from './handlerSafetyNet.js'
import type { IncomingRequest } from './incomingRequest.js'
import { declaredBodyBytes, declaredOverLimit, drainsRefusedBody, LimitedBody } from './limitedBody.js'
import type { RequestAddress } from './requestAddress.js'
import { internalError } from './response.js'

/** The body of a request without one (zero bytes: nothing can write into it). */
const NO_BODY = Buffer.alloc(0)

function isUpload(segments: readonly string[]): boolean {
  return segments[segments.length - 1] === 'upload'
}

function isImport(segments: readonly string[]): boolean {
  return segments.length === 2 && segments[0] === 'import'
}

function bodyLimitBytes(segments: readonly string[], config: Config): number {
  if (isImport(segments)) return config.maxImportBytes
  return isUpload(segments) ? config.maxFileBytes : config.maxBodyBytes
}

function bodyTooLarge(segments: readonly string[], config: Config): ApiError {
  if (isImport(segments)) return new ApiError('TL01-9006', `the import file is larger than ${config.maxImportBytes} bytes (MAX_IMPORT_BYTES)`)
  if (isUpload(segments)) return new ApiError('TL01-1109', `the file is larger than ${config.maxFileBytes} bytes (MAX_FILE_BYTES)`)
  return new ApiError('TL01-9006', `the body is larger than ${config.maxBodyBytes} bytes (MAX_BODY_BYTES)`)
}

/**
 * Reads the body of a request to a tenant's routes up to its path's limit and hands it to `whole`; a body over the
 * limit is refused (its connection ended unless the rest is read and thrown away), a throw of `whole` answered 500.
 */
export function readRoutedBody(incoming: IncomingRequest, address: RequestAddress, config: Config, whole: (body: Buffer) => void): void {
  const { segments } = address
  const limitBytes = bodyLimitBytes(segments, config)
  readBody(
    incoming,
    limitBytes,
    () => incoming.refuse(address, bodyTooLarge(segments, config), !drainsRefusedBody(incoming.headers, limitBytes)),
    whole,
    () => incoming.refuse(address, internalError(incoming.exchange.requestId)),
  )
}

/**
 * Reads the request's body (up to `limitBytes`, from Content-Length up front and again while reading) and hands it
 * to `whole`; `tooLarge` answers a body over the limit, `failed` a bug in `whole`.
 */
export function readBody(incoming: IncomingRequest, limitBytes: number, tooLarge: () => void, whole: (body: Buffer) => void, failed: () => void): void {
  const { headers, exchange } = incoming
  const declaredBytes = declaredBodyBytes(headers)
  if (declaredOverLimit(declaredBytes, limitBytes)) {
    tooLarge()
    return
  }
  const hasBody = declaredBytes > 0 || headers.has('transfer-encoding')
  if (!hasBody) {
    whole(NO_BODY)
    return
  }
  const body = new LimitedBody(limitBytes)
  incoming.res.onData((chunk, isLast) => {
    if (exchange.responseClosed) return
    // uWS frees the chunk after this callback: the body keeps a copy (one: the Buffer is a view of the copied bytes).
    if (!body.add(Buffer.from(chunk.slice(0)))) {
      tooLarge()
      return
    }
    if (!isLast) return
    try {
      whole(body.bytes())
    } catch (error) {
      console.error(`request ${exchange.requestId}: unexpected failure in the HTTP handler:`, error)
      answerFailureSafely(failed, error, 'request', exchange.requestId)
    }
  })
}
