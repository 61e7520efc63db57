/*
 * The OpenAPI 3.1 description of the API, generated from what the service
 * itself runs on, never written by hand as a whole:
 *
 *   - the resource declarations (domain/resources/): a schema per type for
 *     answers and one for request bodies (resourceSchemas.ts), and the
 *     generic operations of every resource path and alias, its views,
 *     actions and inner collections (resourcePaths.ts);
 *   - the route table (routeTable.ts, handed in): every fixed route, joined with its
 *     description (fixedRouteDescriptions.ts) — a route without one, or a
 *     description without its route, is an error at build time, as are an
 *     action or a report without a description;
 *   - the error catalogue (domain/errors.ts) for the error body;
 *   - the Idempotency-Key of every signed-in write (idempotencyKeys.ts).
 *
 * Servers: the address the document was loaded from (relative `/v1`, so
 * "try it" on a tenant's own /docs page calls that tenant), a tenant by
 * path on the public host (relative `/tenant/{tenant}/v1`,
 * http/tenantAddress.ts), the tenant URL template and the public URL as the
 * service builds them (routes/registration.ts). Loaded on the public host
 * (the public address, or a tenant's address by path), the document names
 * the tenant by path first and leaves `/v1` (the public address there) out
 * of the tenant operations' servers, so "try it" on the public /docs page
 * calls the tenant named in the field below the server. A fixed route of the public address only
 * names the public URL as its server; one that answers on both (the
 * confirmation) names both. Security schemes: the access token in the
 * query (`token`) or as `Authorization: Bearer`, the API key (`apikey`
 * or `X-Api-Key`), Basic credentials for login, the calendar secret
 * (`secret`, the calendar feed only).
 *
 * The document depends on the configuration and that host alone: it is
 * built once per running service and host kind, and its JSON text kept
 * (documentBody).
 */
import { assertionFailed } from '../../assert.js'
import { RESOURCES } from '../../domain/resources/index.js'
import type { Services } from '../call.js'
import { actionKeys } from '../routes/actions.js'
import { publicUrl, tenantUrl } from '../routes/registration.js'
import { TENANT_PATH_PREFIX } from '../tenantAddress.js'
import { reportNames } from '../routes/reports.js'
import { ACTION_DESCRIPTIONS, METHOD_ACTIONS } from './actionDescriptions.js'
import { COMMON_SCHEMAS } from './commonSchemas.js'
import { FIXED_ROUTE_DESCRIPTIONS, REPORT_DESCRIPTIONS, type FixedRouteDescription } from './fixedRouteDescriptions.js'
import type { JsonSchema } from './jsonSchema.js'
import { ANSWER_HEADERS, operationIdOf, SIGNED_IN, type Operation } from './operations.js'
import { PARAMETERS, pathParameter } from './parameters.js'
import { IDEMPOTENCY_KEY_PARAMETER, REPLAYED_ANSWER_HEADER, withIdempotencyKeys } from './idempotencyKeys.js'
import { resourcePaths } from './resourcePaths.js'
import { answerSchemaName, answerSchemaOf, requestSchemaName, requestSchemaOf } from './resourceSchemas.js'

type Paths = Record<string, Record<string, Operation>>

/**
 * A fixed route as the description needs it (routeTable.ts's Route without its handler): the table is handed in by
 * the route that serves the document, so this folder does not import the table that imports it.
 */
export interface DescribedRoute {
  readonly method: string
  readonly scope: 'public' | 'tenant'
  readonly pattern: string
  readonly auth: boolean
}

type Route = DescribedRoute

const OPENAPI_VERSION = '3.1.0'

/** `time/reports/:name` → `/time/reports/{name}`. */
function documentedPathOf(pattern: string): string {
  return `/${pattern
    .split('/')
    .map((part) => (part.startsWith(':') ? `{${part.slice(1)}}` : part))
    .join('/')}`
}

function routeKey(route: Pick<Route, 'method' | 'pattern'>): string {
  return `${route.method} ${route.pattern}`
}

function fail(message: string): never {
  assertionFailed(`the OpenAPI description cannot be built: ${message}`)
}

/** Every registered action is described, and every description names a registered action. */
function checkActions(): void {
  const registered = new Set(actionKeys())
  for (const key of registered) if (!ACTION_DESCRIPTIONS.has(key) && !METHOD_ACTIONS.has(key)) fail(`the action ${key} has no description (openapi/actionDescriptions.ts)`)
  for (const key of [...ACTION_DESCRIPTIONS.keys(), ...METHOD_ACTIONS]) if (!registered.has(key)) fail(`the description of ${key} names no registered action`)
  const reports = new Set(reportNames())
  for (const name of reports) if (!REPORT_DESCRIPTIONS.has(name)) fail(`the report ${name} has no description`)
  for (const name of REPORT_DESCRIPTIONS.keys()) if (!reports.has(name)) fail(`the description of the report ${name} names no report`)
}

interface Servers {
  readonly public: { url: string; description: string }[]
  readonly both: { url: string; description: string }[]
}

/** One operation of a fixed route, from the route and its description. */
function fixedOperation(route: Route, path: string, described: FixedRouteDescription, servers: Servers, scopes: ReadonlySet<Route['scope']>): Operation {
  const pathNames = [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1] as string)
  return {
    operationId: operationIdOf(route.method, path),
    summary: described.summary,
    ...(described.description === undefined ? {} : { description: described.description }),
    tags: [described.tag],
    parameters: [...pathNames.map((name) => pathParameter(name)), ...(described.query ?? [])],
    ...(described.body === undefined ? {} : { requestBody: described.body }),
    responses: described.answers,
    security: route.auth ? SIGNED_IN : (described.security ?? SIGNED_IN),
    ...(scopes.has('tenant') ? (scopes.has('public') ? { servers: servers.both } : {}) : { servers: servers.public }),
  }
}

/** The fixed routes' operations; the reports' route once per report. */
function fixedPaths(routes: readonly Route[], servers: Servers): Paths {
  const paths: Paths = {}
  const scopesOf = new Map<string, Set<Route['scope']>>()
  for (const route of routes) {
    const key = routeKey(route)
    const scopes = scopesOf.get(key) ?? new Set()
    scopes.add(route.scope)
    scopesOf.set(key, scopes)
    if (!FIXED_ROUTE_DESCRIPTIONS.has(key)) fail(`the route ${route.scope} ${key} has no description (openapi/fixedRouteDescriptions.ts)`)
  }
  const routeKeys = new Set(routes.map(routeKey))
  for (const key of FIXED_ROUTE_DESCRIPTIONS.keys()) if (!routeKeys.has(key)) fail(`the description of ${key} names no route`)
  for (const route of routes) {
    const key = routeKey(route)
    const scopes = scopesOf.get(key) as Set<Route['scope']>
    const described = FIXED_ROUTE_DESCRIPTIONS.get(key) as FixedRouteDescription
    const method = route.method.toLowerCase()
    if (route.pattern === 'time/reports/:name') {
      for (const [name, report] of REPORT_DESCRIPTIONS) {
        const path = `/time/reports/${name}`
        paths[path] ??= {}
        paths[path][method] = fixedOperation(route, path, report, servers, scopes)
      }
      continue
    }
    const path = described.documentedPath ?? documentedPathOf(route.pattern)
    paths[path] ??= {}
    paths[path][method] ??= fixedOperation(route, path, described, servers, scopes)
  }
  return paths
}

function componentSchemas(): Record<string, JsonSchema> {
  const schemas: Record<string, JsonSchema> = { ...COMMON_SCHEMAS }
  for (const decl of RESOURCES) {
    // Internal types whose objects answers still show (a file's metadata) have their schema; the secrets' types none.
    if (decl.internal && decl.type !== 'FileMetadata') continue
    schemas[answerSchemaName(decl.type)] = answerSchemaOf(decl)
    schemas[requestSchemaName(decl.type)] = requestSchemaOf(decl)
  }
  return schemas
}

/** Paths of both sources, refusing one path and method described twice and repeated operation ids. */
function joinPaths(...sources: Paths[]): Paths {
  const joined: Paths = {}
  const operationIds = new Set<string>()
  for (const source of sources) {
    for (const [path, item] of Object.entries(source)) {
      joined[path] ??= {}
      const target = joined[path]
      for (const [method, op] of Object.entries(item)) {
        if (target[method] !== undefined) fail(`${method.toUpperCase()} ${path} is described twice`)
        if (operationIds.has(op.operationId)) fail(`the operation id ${op.operationId} is used twice`)
        operationIds.add(op.operationId)
        target[method] = op
      }
    }
  }
  return Object.fromEntries(Object.entries(joined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
}

/** Where the document was loaded: a tenant's own host, or the public host (the public address, a tenant by path). */
export type DocumentHost = 'tenant' | 'public'

/** The document for a service with this configuration (routes/registration.ts builds its URLs), loaded on `host`. */
export function buildOpenApiDocument(services: Services, routes: readonly DescribedRoute[], host: DocumentHost = 'tenant'): Record<string, unknown> {
  checkActions()
  const here = { url: '/v1', description: 'the address this document was loaded from (open /docs on a tenant’s address to try its calls)' }
  const tenantPathServer = {
    url: `${TENANT_PATH_PREFIX}{tenant}/v1`,
    description: 'a tenant on the public address, named in the path (for clients that cannot reach <urlPrefix>.<BASE_DOMAIN>)',
    variables: { tenant: { default: 'acme', description: 'the account’s urlPrefix' } },
  }
  const publicServer = { url: publicUrl(services), description: 'the public URL (registration, password change)' }
  const tenantServer = {
    url: tenantUrl(services, '{tenant}'),
    description: 'a tenant’s URL: the account’s urlPrefix is the first part of the host',
    variables: { tenant: { default: 'acme', description: 'the account’s urlPrefix' } },
  }
  const servers: Servers = { public: [publicServer, here], both: [here, tenantPathServer, tenantServer, publicServer] }
  const exposed = RESOURCES.filter((decl) => !decl.internal && decl.path !== null)
  return {
    openapi: OPENAPI_VERSION,
    info: {
      title: 'TimeLedger API',
      version: '1',
      summary: 'Time tracking and project management, one account (tenant) per address',
      description: [
        'Every call of a tenant goes to the tenant’s address, `http://<urlPrefix>.<BASE_DOMAIN>/v1/…` (or, the same, `http://<BASE_DOMAIN>/tenant/<urlPrefix>/v1/…`); registration and the password change without a token go to the public address, `http://<BASE_DOMAIN>/v1/…`.',
        'Log in with `GET /auth/login` (API key and Basic credentials) for a token, then send it as `?token=` or `Authorization: Bearer`. Answers are JSON (dates as `/Date(ms)/`, or ISO 8601 text with `dates=iso` or `Accept: application/json; dates=iso`) or XML with `format=xml`; errors have the body `Error` with a code of the README’s catalogue.',
      ].join('\n\n'),
    },
    servers: host === 'tenant' ? [here, tenantPathServer, tenantServer, publicServer] : [tenantPathServer, tenantServer, publicServer],
    security: SIGNED_IN,
    tags: [
      { name: 'Authentication', description: 'log in, refresh, log out, sessions, password change' },
      { name: 'Registration', description: 'sign up a new account (public address)' },
      ...exposed.map((decl) => ({ name: decl.type, description: decl.description })),
      { name: 'Reports', description: 'totals of time records by group, range and period' },
      { name: 'Changes', description: 'the change feed: every change the caller may see, live (WebSocket or Server-Sent Events)' },
      { name: 'Storage', description: 'a small key/value text store' },
      { name: 'Files', description: 'signatures, logos, receipts' },
      { name: 'Batch', description: 'many requests in one call' },
      { name: 'Import', description: 'time records from the CSV exports of Toggl Track, Clockify, Harvest, Kimai, or any CSV' },
      { name: 'Calendar', description: 'the caller’s time records as a calendar feed (iCalendar), and the secret that opens it for calendar applications' },
      { name: 'History', description: 'the account’s history: every change the log still holds, who made it and what changed (an object’s own history is its `$history`)' },
      { name: 'Reference', description: 'this description' },
    ],
    paths: withIdempotencyKeys(joinPaths(resourcePaths(exposed), fixedPaths(routes, servers))),
    components: {
      schemas: componentSchemas(),
      parameters: { ...PARAMETERS, idempotencyKey: IDEMPOTENCY_KEY_PARAMETER },
      headers: { ...ANSWER_HEADERS, 'Idempotent-Replayed': REPLAYED_ANSWER_HEADER },
      responses: {
        Error: {
          description: 'an error: the error body with its code',
          content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } }, 'application/xml': { schema: { type: 'string' } } },
        },
      },
      securitySchemes: {
        token: { type: 'apiKey', in: 'query', name: 'token', description: 'the access token of GET /auth/login' },
        bearer: { type: 'http', scheme: 'bearer', description: 'the access token of GET /auth/login as `Authorization: Bearer <token>`' },
        apikey: { type: 'apiKey', in: 'query', name: 'apikey', description: 'the API key (login, refresh, public calls)' },
        apikeyHeader: { type: 'apiKey', in: 'header', name: 'X-Api-Key', description: 'the API key as a header' },
        basic: { type: 'http', scheme: 'basic', description: 'login: e-mail and password, or a secret key and no password' },
        calendarSecret: { type: 'apiKey', in: 'query', name: 'secret', description: 'the calendar secret of POST /users/@self/calendar/secret: opens the caller’s calendar feed, and nothing else' },
      },
    },
  }
}

/** The document's JSON text, built on first use for each running service and host kind, and kept. */
const bodies = new WeakMap<Services['config'], Map<DocumentHost, Buffer>>()

export function documentBody(services: Services, routes: readonly DescribedRoute[], host: DocumentHost = 'tenant'): Buffer {
  let ofService = bodies.get(services.config)
  if (ofService === undefined) {
    ofService = new Map()
    bodies.set(services.config, ofService)
  }
  let body = ofService.get(host)
  if (body === undefined) {
    body = Buffer.from(JSON.stringify(buildOpenApiDocument(services, routes, host)))
    ofService.set(host, body)
  }
  return body
}
