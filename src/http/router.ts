/*
 * Dispatch: one request in, one response out, never a throw; the response
 * itself rather than a promise when nothing on the way waits (the tenant
 * active and idle, a read of durable state: maybePromise.ts). Finds the
 * tenant, the route (a fixed route of the table, else a declared resource
 * path), authenticates when the route needs it (and meters the caller's
 * request rate, rateLimiter.ts, telling the quota left in the answer's
 * headers, rateLimitHeaders.ts), and turns every error into
 * the error body: ApiError as it is (a 5xx with the request's id in its
 * description), anything else as 500 TL01-9001 with the request's id,
 * which is also logged. The route it found is reported
 * through `trace` as a bounded label (routeLabel.ts) for metrics and logs.
 * A fixed route's handler is given `route` itself (requestRouter.ts): the
 * batch routes its items through it. In cluster mode a request for a
 * tenant another node holds is forwarded there (forwarding.ts).
 */
import { assertionFailed } from '../assert.js'
import { ApiError } from '../domain/errors.js'
import { refusalAsApiError } from './refusalAnswers.js'
import { TenantElsewhere } from '../tenants/tenantErrors.js'
import { andThen, type MaybePromise } from '../maybePromise.js'
import type { RouteLabel } from '../observability/requestMetrics.js'
import { RESOURCE_PATHS, resourceByPath } from '../domain/resources/index.js'
import type { ResourceDecl } from '../domain/schema.js'
import { authenticate } from './authenticate.js'
import { exportNotOffered, exportRequired } from './export/exportFormat.js'
import { datesOptionProblem } from './jsonDates.js'
import type { Call, Services, TenantAccess } from './call.js'
import { meterRequest } from './rateLimiter.js'
import { withRateLimitHeaders } from './rateLimitHeaders.js'
import type { ApiRequest } from './request.js'
import { errorResponse, type ApiResponse } from './response.js'
import { failureAsApiError } from './failureError.js'
import { fixedRouteLabel, resourceRouteLabel } from './routeLabel.js'
import { matchingRoutes } from './routeTable.js'
import { handleResource } from './routes/resources.js'
import { MethodNotAllowed } from './routes/methodNotAllowed.js'
import { idempotencyKeyOf } from './idempotencyKey.js'
import { keyedWrite, type KeyedRoute } from './keyedWrite.js'

/** The resource paths split into segments, longest first (as RESOURCE_PATHS), with their declaration. */
const RESOURCE_PATH_SEGMENTS = RESOURCE_PATHS.map((path) => {
  const decl = resourceByPath(path)
  if (decl === undefined) assertionFailed(`resource path ${path} has no declaration`)
  return { path, segments: path.split('/'), decl }
})

/** The longest resource path the request's path starts with, its declaration, and the segments after it. */
function findResource(segments: readonly string[]): { path: string; decl: ResourceDecl; rest: readonly string[] } | null {
  for (const candidate of RESOURCE_PATH_SEGMENTS) {
    if (startsWithSegments(segments, candidate.segments)) return { path: candidate.path, decl: candidate.decl, rest: segments.slice(candidate.segments.length) }
  }
  return null
}

function startsWithSegments(segments: readonly string[], prefix: readonly string[]): boolean {
  if (prefix.length > segments.length) return false
  for (let index = 0; index < prefix.length; index += 1) if (prefix[index] !== segments[index]) return false
  return true
}

/** Finds the caller by token, counts the request against the caller's rate limit, then goes on with `next` (its answer telling the quota). */
function signedIn(call: Call, next: () => MaybePromise<ApiResponse>): MaybePromise<ApiResponse> {
  return andThen(authenticate(call), (principal) => {
    call.principal = principal
    return withRateLimitHeaders(meterRequest(call), next)
  })
}

/** A 5xx names the request id in its description, so a report of it can be found in the logs. */
function withRequestId(error: ApiError, requestId: string): ApiError {
  // A batch's item and the batch share the request id: an item's 5xx that fails the batch names it once.
  if (error.description?.includes(`request id ${requestId}`) === true) return error
  const description = error.description === null ? `request id ${requestId}` : `${error.description} (request id ${requestId})`
  return new ApiError(error.code, error.message, description, error.constraintViolations, error.headers)
}

/** Where the router reports the route it found (left as it was when none matched). */
export interface RouteTrace {
  route: RouteLabel
}

/**
 * A write with an Idempotency-Key, once its caller is known (keyedWrite.ts): the route's answer, failures rendered, is
 * what is kept. A batch's items run inside the batch's keyed write: their keys are not read.
 */
function keyed(call: Call, key: string, holdsItself: boolean, handle: (call: Call) => MaybePromise<ApiResponse>): Promise<ApiResponse> {
  const route: KeyedRoute = async (held) => {
    try {
      return await handle(held)
    } catch (error) {
      return failure(held.request, error)
    }
  }
  return keyedWrite(call, key, holdsItself, route)
}

function dispatch(call: Call, trace: RouteTrace | undefined): MaybePromise<ApiResponse> {
  const { request } = call
  // A write's Idempotency-Key, refused at once when malformed (idempotencyKey.ts); batch items' keys are not read.
  const key = request.inBatch ? undefined : idempotencyKeyOf(request)
  // Exports answer GET only: a write that insists on one is refused before it is made (export/exportFormat.ts).
  const insisted = request.method === 'GET' ? null : exportRequired(request)
  if (insisted !== null) throw exportNotOffered(insisted, `${request.method} answers JSON or XML`)
  // A `dates` option that names no form is refused before anything is done (jsonDates.ts).
  const datesProblem = datesOptionProblem(request)
  if (datesProblem !== null) throw datesProblem
  const scope = request.tenant === null ? 'public' : 'tenant'
  const allowed: string[] = []
  for (const { route: fixed, params } of matchingRoutes(scope, request.segments)) {
    if (fixed.method !== request.method) {
      allowed.push(fixed.method)
      continue
    }
    if (trace !== undefined) trace.route = fixedRouteLabel(fixed)
    if (key !== undefined) {
      if (!fixed.auth || scope === 'public') throw new ApiError('TL01-1112', 'an Idempotency-Key is taken on the writes of a signed-in user, not on this call')
      return signedIn(call, () => keyed(call, key, fixed.holdsTenant === true, (held) => fixed.handle(held, params, route)))
    }
    return fixed.auth ? signedIn(call, () => fixed.handle(call, params, route)) : fixed.handle(call, params, route)
  }
  if (allowed.length > 0) throw new MethodNotAllowed(request.method, allowed)
  const resource = scope === 'tenant' ? findResource(request.segments) : null
  if (resource === null) {
    throw new ApiError('TL01-9003', `no resource at /v1/${request.segments.join('/')}${scope === 'public' ? ' on the public address' : ''}`)
  }
  const { decl, path, rest } = resource
  if (trace !== undefined) trace.route = resourceRouteLabel(decl, path, rest)
  if (key !== undefined) return signedIn(call, () => keyed(call, key, false, (held) => handleResource(held, decl, rest, path)))
  return signedIn(call, () => handleResource(call, decl, rest, path))
}

/** The error body of a failure: ApiError as it is (a 5xx naming the request), anything else a logged 500. */
function failure(request: ApiRequest, thrown: unknown): ApiResponse {
  const describe = (id: string) => `request ${id} ${request.method} /v1/${request.segments.join('/')}`
  const error = failureAsApiError(refusalAsApiError(thrown), () => request.requestId, describe)
  return errorResponse(request, error.status >= 500 ? withRequestId(error, request.requestId) : error)
}

/**
 * Answers a request, at once when nothing on its path waits (maybePromise.ts); never throws or rejects. `access`
 * replaces the tenant's actor (a batch runs its items in one transaction).
 */
export function route(services: Services, request: ApiRequest, access?: TenantAccess, trace?: RouteTrace): MaybePromise<ApiResponse> {
  try {
    const tenant = request.tenant === null ? null : (access ?? services.registry.open(request.tenant))
    const response = andThen(tenant, (found) => {
      if (found === undefined) throw new ApiError('TL01-1005', `there is no account at '${request.tenant}'`)
      return dispatch({ services, request, tenantName: request.tenant, tenant: found, principal: null }, trace)
    })
    return response instanceof Promise ? response.catch((error: unknown) => forwardOrFailure(services, request, error)) : response
  } catch (error) {
    return forwardOrFailure(services, request, error)
  }
}

/**
 * Cluster mode: a request for a tenant another node holds goes there (forwarding.ts), unless it came forwarded
 * already or belongs to a batch (whose items run in this node's transaction); anything else is a failure.
 */
function forwardOrFailure(services: Services, request: ApiRequest, error: unknown): MaybePromise<ApiResponse> {
  const forwarder = services.forwarder
  if (!(error instanceof TenantElsewhere) || forwarder === null || request.forwarded || request.inBatch) return failure(request, error)
  return forwarder.forward(request, error.nodeUrl).catch((forwardError: unknown) => failure(request, forwardError))
}
