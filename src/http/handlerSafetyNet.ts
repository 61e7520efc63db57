/*
 * The safety net of both listeners' request handlers (the API on
 * uWebSockets.js, server.ts; the admin listener on Node's http,
 * admin/adminServer.ts). No exception may leave a handler of either: it
 * would end the process, and every tenant with it. So a failure on the
 * way to an answer — a throw in the handler, an answer that rejects, a
 * write of the answer that throws — is answered by the listener's own
 * error answer (`answerFailure`: 500 TL01-9001 naming the request for a
 * bug), and if even that cannot be written, it is logged, never thrown.
 * The request is named in that log line as `<listener> <request>`
 * ("request <id>", "admin request <method> <path>"), built only then.
 */

function logUnwritten(listener: string, request: string, answerError: unknown): void {
  console.error(`${listener} ${request}: its error answer could not be written:`, answerError)
}

/** Runs `answerFailure(error)`; a throw of it is logged. */
export function answerFailureSafely(answerFailure: (error: unknown) => void, error: unknown, listener: string, request: string): void {
  try {
    answerFailure(error)
  } catch (answerError) {
    logUnwritten(listener, request, answerError)
  }
}

/** Writes an answer once it comes; a rejection, or a throw of `write`, goes to `answerFailure`, whose own throw is logged. */
export function writeWhenReady<R>(answer: Promise<R>, write: (response: R) => void, answerFailure: (error: unknown) => void, listener: string, request: string): void {
  answer
    .then(write)
    .catch(answerFailure)
    .catch((answerError: unknown) => logUnwritten(listener, request, answerError))
}
