/*
 * `GET /v1/openapi.json`: the OpenAPI 3.1 description of the API
 * (openapi/openApiDocument.ts), on the public address and on every
 * tenant's, without a token; with `tags=` a part of it (the outline, or the
 * operations of some tags: openapi/documentParts.ts), which the reference
 * page loads. The route table hands itself in (the description is made
 * from it, and this file cannot import the table that imports it). The
 * text is built once per running service and kept, one for a tenant's own
 * host and one for the public host, where a tenant is named in the path
 * (openapi/openApiDocument.ts, servers), and so are its parts.
 */
import type { Call } from '../call.js'
import { documentPartBody } from '../openapi/documentParts.js'
import { documentBody, type DescribedRoute, type DocumentHost } from '../openapi/openApiDocument.js'
import type { ApiResponse } from '../response.js'

/** A tenant's own host, or the public host (the public address, or a tenant named in the path). */
function documentHost(call: Call): DocumentHost {
  return call.request.tenant !== null && call.request.addressPrefix === '' ? 'tenant' : 'public'
}

export async function openApiAnswer(call: Call, routes: readonly DescribedRoute[]): Promise<ApiResponse> {
  const tags = call.request.query.get('tags')
  // The whole text is kept per host (documentBody), so it is also what the parts of that host are kept by.
  const whole = documentBody(call.services, routes, documentHost(call))
  const body = tags === undefined ? whole : documentPartBody(whole, () => whole, tags)
  return { status: 200, headers: { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-cache' }, body }
}
