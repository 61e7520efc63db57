/*
 * Internal invariant checks. A failed assertion is a bug, never a user
 * error: it throws a plain Error, which the HTTP layer answers as 500
 * TL01-9001 with the request's id (and logs), unlike the API's own errors
 * (domain/errors.ts). Every layer may use these; they import nothing.
 */

/** Internal invariant check: a failure is a bug, never a user error. */
export function assert(condition: unknown, message: string): asserts condition {
  if (!condition) assertionFailed(message)
}

/**
 * The same failure, for hot paths whose message is built from values:
 * `if (!ok) assertionFailed(`…${value}`)` builds the message only when the
 * check fails, where `assert(ok, `…${value}`)` would build it on every call.
 */
export function assertionFailed(message: string): never {
  throw new Error(`assertion failed: ${message}`)
}
