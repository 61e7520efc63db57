/*
 * What a failed request is answered with, on both listeners (the API's
 * router.ts and admin/adminServer.ts): an ApiError (a refusal, or a 5xx the
 * code chose) as it is; anything else is a bug, logged under a request id
 * and answered 500 TL01-9001 naming that id, so a report of it can be found
 * in the log. Each listener renders the error its own way and names its
 * requests its own way (the API's request id; the admin listener's ids of
 * failed requests), and the router first turns the tenant layer's refusals
 * into their ApiErrors (refusalAnswers.ts).
 */
import { ApiError } from '../domain/errors.js'
import { internalError } from './response.js'

/**
 * The ApiError that answers `thrown`. `requestId` is asked only for a bug; `describe` names the request in the log
 * line (`${describe(id)} failed:`).
 */
export function failureAsApiError(thrown: unknown, requestId: () => string, describe: (id: string) => string): ApiError {
  if (thrown instanceof ApiError) return thrown
  const id = requestId()
  console.error(`${describe(id)} failed:`, thrown)
  return internalError(id)
}
