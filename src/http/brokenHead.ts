/*
 * A request whose head breaks a rule of messageRules.ts (two Host headers,
 * a body framing that reads two ways) is refused before anything reads its
 * body: 400, and its connection closed, one event-loop turn later
 * (refuseAndClose says why).
 */
import { answerFailureSafely } from './handlerSafetyNet.js'
import type { IncomingRequest } from './incomingRequest.js'
import { headProblem } from './messageRules.js'
import { errorResponse, internalError, plainErrorResponse, type ApiResponse } from './response.js'

/** Refuses the request when its head breaks a rule of messageRules.ts; true: refused (its answer comes a turn later). */
export function refusesBrokenHead(incoming: IncomingRequest): boolean {
  const problem = headProblem(incoming.counts, incoming.headers, incoming.url)
  if (problem === null) return false
  refuseAndClose(incoming, () => errorResponse(incoming.unsplitHead(), problem))
  return true
}

/**
 * Answers a request whose head breaks a rule of messageRules.ts, and closes its connection, one event-loop turn
 * later. This uWS build goes on parsing what already arrived on the connection once the handler returns, and
 * serves a request that followed in the same read even after an answer that closes (the next request clears the
 * close): `Content-Length: 0` twice-framed with a request behind it was answered twice. Unanswered, the refused
 * request is still pending when uWS reads the next one, and uWS then ends the connection itself: nothing behind a
 * refused head is ever served. A refused request with nothing behind it gets its 400.
 */
function refuseAndClose(incoming: IncomingRequest, answer: () => ApiResponse): void {
  const { requestId } = incoming.exchange
  setImmediate(() => {
    try {
      incoming.send(answer(), true)
    } catch (error) {
      console.error(`request ${requestId}: its refusal could not be made:`, error)
      answerFailureSafely(() => incoming.send(plainErrorResponse(internalError(requestId)), true), error, 'request', requestId)
    }
  })
}
