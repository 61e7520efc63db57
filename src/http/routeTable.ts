/*
 * The fixed routes of the service (everything that is not a declared
 * resource path). `scope` says whether a route lives on the public URL or
 * a tenant URL; `auth` whether it needs an access token. Path patterns
 * match segment by segment; `:name` captures one segment (pathPattern.ts). A handler is
 * given the router's entry too (requestRouter.ts): the batch routes its
 * items through it, without importing the router that imports this table.
 */
import type { Call } from './call.js'
import { compilePattern, matchCompiled, type PathPattern } from './pathPattern.js'
import type { RequestRouter } from './requestRouter.js'
import type { ApiResponse } from './response.js'
import { login, logout, refresh } from './routes/auth.js'
import { listOwnAccessTokens, revokeOwnAccessToken } from './routes/accessTokens.js'
import { ownAllowedProducts, productFree, userAllowedProducts, userExceededAccesses, userProductFree } from './routes/accesses.js'
import { runBatch } from './routes/batch.js'
import { fileHandlers } from './routes/files.js'
import { listStorageGroup, readStorageEntry, removeStorageEntry, writeStorageEntry } from './routes/storage.js'
import { confirmPassword, requestConfirmation } from './routes/passwordChange.js'
import { createSecretKey, deleteSecretKey, listSecretKeys } from './routes/secretKeys.js'
import { documentRoutes } from './routes/documentRoutes.js'
import { report } from './routes/reports.js'
import { checkEmail, checkUrl, confirmAccount, findUrl, signUp } from './routes/registration.js'
import { openApiAnswer } from './routes/docsOpenApi.js'
import { openChanges } from './routes/changes.js'
import { importRecords } from './routes/imports.js'
import { activity } from './routes/history.js'
import { calendarFeed, createCalendarSecret, deleteCalendarSecret, readCalendarSecret } from './routes/calendar.js'
import { ApiError } from '../domain/errors.js'
import { LOGO, SIGNATURE } from '../domain/files.js'
import { RECEIPT } from '../domain/operations/expenseReceipt.js'

export interface Route {
  method: string
  scope: 'public' | 'tenant'
  pattern: string
  auth: boolean
  /** The route holds its tenant itself (the batch): with an Idempotency-Key it keeps its answer in its own write (keyedWrite.ts). */
  holdsTenant?: boolean
  handle(call: Call, params: Record<string, string>, routeRequest: RequestRouter): Promise<ApiResponse>
}

async function confirm(call: Call, params: Record<string, string>): Promise<ApiResponse> {
  const id = params.id ?? ''
  const answer = await confirmAccount(call, id)
  if (answer === null) throw new ApiError('TL01-1006', `confirmation id '${id}' is invalid`)
  return answer
}

const secretKeyDocuments = documentRoutes('SecretKey', 'users/@self/secretkeys')
/** The four routes of a file slot at `at`: its metadata, its bytes uploaded, downloaded, and removed. */
function fileRoutes(at: string, slot: Parameters<typeof fileHandlers>[0]): Route[] {
  const handlers = fileHandlers(slot)
  return [
    { method: 'POST', scope: 'tenant', pattern: `${at}/upload`, auth: true, handle: handlers.upload },
    { method: 'GET', scope: 'tenant', pattern: `${at}/download`, auth: true, handle: handlers.download },
    { method: 'GET', scope: 'tenant', pattern: at, auth: true, handle: handlers.metadata },
    { method: 'DELETE', scope: 'tenant', pattern: at, auth: true, handle: handlers.remove },
  ]
}

export const ROUTES: readonly Route[] = [
  { method: 'GET', scope: 'public', pattern: 'register/checkurl', auth: false, handle: checkUrl },
  { method: 'GET', scope: 'public', pattern: 'register/checkemail', auth: false, handle: checkEmail },
  { method: 'GET', scope: 'public', pattern: 'register/findurl', auth: false, handle: findUrl },
  { method: 'POST', scope: 'public', pattern: 'register/signup', auth: false, handle: signUp },
  { method: 'POST', scope: 'tenant', pattern: 'auth/confirm/:id', auth: false, handle: confirm },
  { method: 'GET', scope: 'tenant', pattern: 'auth/login', auth: false, handle: login },
  { method: 'GET', scope: 'tenant', pattern: 'auth/refreshtoken', auth: false, handle: refresh },
  { method: 'GET', scope: 'tenant', pattern: 'auth/logout', auth: true, handle: logout },
  { method: 'DELETE', scope: 'tenant', pattern: 'auth/token', auth: true, handle: logout },
  { method: 'POST', scope: 'tenant', pattern: 'batch', auth: true, holdsTenant: true, handle: runBatch },
  { method: 'POST', scope: 'public', pattern: 'users/requestconfirmation', auth: false, handle: requestConfirmation },
  { method: 'POST', scope: 'public', pattern: 'auth/confirm/:id', auth: false, handle: confirmPassword },
  { method: 'POST', scope: 'tenant', pattern: 'users/@self/secretkeys', auth: true, handle: createSecretKey },
  { method: 'GET', scope: 'tenant', pattern: 'users/@self/secretkeys', auth: true, handle: listSecretKeys },
  { method: 'DELETE', scope: 'tenant', pattern: 'users/@self/secretkeys/:id', auth: true, handle: deleteSecretKey },
  { method: 'GET', scope: 'tenant', pattern: 'time/reports/:name', auth: true, handle: report },
  { method: 'GET', scope: 'tenant', pattern: 'storage/:group', auth: true, handle: listStorageGroup },
  { method: 'GET', scope: 'tenant', pattern: 'storage/:group/:key', auth: true, handle: readStorageEntry },
  { method: 'POST', scope: 'tenant', pattern: 'storage/:group/:key', auth: true, handle: writeStorageEntry },
  { method: 'DELETE', scope: 'tenant', pattern: 'storage/:group/:key', auth: true, handle: removeStorageEntry },
  { method: 'GET', scope: 'tenant', pattern: 'storage/:group/:key/:scope', auth: true, handle: readStorageEntry },
  { method: 'POST', scope: 'tenant', pattern: 'storage/:group/:key/:scope', auth: true, handle: writeStorageEntry },
  { method: 'DELETE', scope: 'tenant', pattern: 'storage/:group/:key/:scope', auth: true, handle: removeStorageEntry },
  ...fileRoutes('users/:id/signature', SIGNATURE),
  ...fileRoutes('accounts/:id/logo', LOGO),
  { method: 'GET', scope: 'tenant', pattern: 'activity', auth: true, handle: activity },
  // The caller's sessions and the licence calls of the original service.
  { method: 'GET', scope: 'tenant', pattern: 'users/@self/accesstokens', auth: true, handle: listOwnAccessTokens },
  { method: 'DELETE', scope: 'tenant', pattern: 'users/@self/accesstokens/:id', auth: true, handle: revokeOwnAccessToken },
  { method: 'GET', scope: 'tenant', pattern: 'accesses/product/:product/$free', auth: true, handle: productFree },
  { method: 'GET', scope: 'tenant', pattern: 'accesses/products/$allowed', auth: true, handle: ownAllowedProducts },
  { method: 'GET', scope: 'tenant', pattern: 'users/:id/accesses/product/:product/$free', auth: true, handle: userProductFree },
  { method: 'GET', scope: 'tenant', pattern: 'users/:id/accesses/products/$allowed', auth: true, handle: userAllowedProducts },
  { method: 'GET', scope: 'tenant', pattern: 'users/:id/accesses/@exceeded', auth: true, handle: userExceededAccesses },
  // The documents of the caller's secret keys (the other inner collections get theirs from resources.ts).
  { method: 'GET', scope: 'tenant', pattern: 'users/@self/secretkeys/$metadata', auth: true, handle: secretKeyDocuments.metadata },
  { method: 'GET', scope: 'tenant', pattern: 'users/@self/secretkeys/$dummy', auth: true, handle: secretKeyDocuments.dummy },
  // The receipt of an expense, uploaded and downloaded like a signature.
  ...fileRoutes('time/expenses/:id/receipt', RECEIPT),
  // The change feed (WebSocket or Server-Sent Events).
  { method: 'GET', scope: 'tenant', pattern: 'changes', auth: true, handle: openChanges },
  // Moving in from other tools: a CSV export becomes time records.
  { method: 'POST', scope: 'tenant', pattern: 'import/:source', auth: true, handle: importRecords },
  // The caller's time records as a calendar feed; its secret signs the feed in (and nothing else).
  { method: 'GET', scope: 'tenant', pattern: 'users/@self/calendar.ics', auth: false, handle: calendarFeed },
  { method: 'POST', scope: 'tenant', pattern: 'users/@self/calendar/secret', auth: true, handle: createCalendarSecret },
  { method: 'GET', scope: 'tenant', pattern: 'users/@self/calendar/secret', auth: true, handle: readCalendarSecret },
  { method: 'DELETE', scope: 'tenant', pattern: 'users/@self/calendar/secret', auth: true, handle: deleteCalendarSecret },
  // The OpenAPI description (`/v1/openapi.json`; the router sees the path without `.json`), made from this table.
  { method: 'GET', scope: 'public', pattern: 'openapi', auth: false, handle: (call) => openApiAnswer(call, ROUTES) },
  { method: 'GET', scope: 'tenant', pattern: 'openapi', auth: false, handle: (call) => openApiAnswer(call, ROUTES) },
]

/** A route of the table and what its pattern captured from a path. */
export interface RouteMatch {
  route: Route
  params: Record<string, string>
}

interface CompiledRoute {
  route: Route
  pattern: PathPattern
}

/**
 * The routes of each scope by the number of segments of their pattern, patterns compiled once: a path is
 * compared only with the patterns of its own length (none, for a resource path of most lengths).
 */
const ROUTES_BY_LENGTH: Record<Route['scope'], CompiledRoute[][]> = { public: [], tenant: [] }
for (const route of ROUTES) {
  const pattern = compilePattern(route.pattern)
  const byLength = ROUTES_BY_LENGTH[route.scope]
  let ofLength = byLength[pattern.literals.length]
  if (ofLength === undefined) {
    ofLength = []
    byLength[pattern.literals.length] = ofLength
  }
  ofLength.push({ route, pattern })
}

/** Every route of the scope whose pattern the path matches, in table order (whatever their method). */
export function matchingRoutes(scope: Route['scope'], segments: readonly string[]): readonly RouteMatch[] {
  let matches: RouteMatch[] | null = null
  for (const { route, pattern } of ROUTES_BY_LENGTH[scope][segments.length] ?? []) {
    const params = matchCompiled(pattern, segments)
    if (params === null) continue
    if (matches === null) matches = [{ route, params }]
    else matches.push({ route, params })
  }
  return matches ?? NO_MATCHES
}

const NO_MATCHES: readonly RouteMatch[] = []
