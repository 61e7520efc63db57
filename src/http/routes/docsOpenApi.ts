/*
 * `GET /v1/openapi.json`: the OpenAPI 3.1 description of the API
 * (openapi/openApiDocument.ts), on the public address and on every
 * tenant's, without a token. The route table hands itself in (the
 * description is made from it, and this file cannot import the table
 * that imports it). The text is built once per running service and kept,
 * one for a tenant's own host and one for the public host, where a tenant
 * is named in the path (openapi/openApiDocument.ts, servers).
 */
import type { Call } from '../call.js'
import { documentBody, type DescribedRoute, type DocumentHost } from '../openapi/openApiDocument.js'
import type { ApiResponse } from '../response.js'

/** A tenant's own host, or the public host (the public address, or a tenant named in the path). */
function documentHost(call: Call): DocumentHost {
  return call.request.tenant !== null && call.request.addressPrefix === '' ? 'tenant' : 'public'
}

export async function openApiAnswer(call: Call, routes: readonly DescribedRoute[]): Promise<ApiResponse> {
  return { status: 200, headers: { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-cache' }, body: documentBody(call.services, routes, documentHost(call)) }
}
