/*
 * An OPTIONS request on the API listener is answered before routing and
 * without a token: a CORS preflight (204 with the CORS headers), or a clear
 * 4xx (cors.ts). A preflight has no body; an OPTIONS that sends one is
 * answered without reading it, and its connection closed.
 */
import type { CorsOrigins } from '../config.js'
import { ApiError } from '../domain/errors.js'
import { answerOptions } from './cors.js'
import type { IncomingRequest } from './incomingRequest.js'
import { declaredBodyBytes } from './limitedBody.js'

/** Answers an OPTIONS request; true: answered, false: the request is not one. */
export function answersPreflight(incoming: IncomingRequest, corsOrigins: CorsOrigins | null): boolean {
  if (incoming.exchange.method !== 'OPTIONS') return false
  const { headers } = incoming
  const unreadBody = declaredBodyBytes(headers) !== 0 || headers.has('transfer-encoding')
  const preflight = answerOptions(corsOrigins, headers)
  if (preflight instanceof ApiError) incoming.refuse(incoming.unsplitHead(), preflight, unreadBody)
  else incoming.send({ status: 204, headers: preflight, body: '' }, unreadBody)
  return true
}
