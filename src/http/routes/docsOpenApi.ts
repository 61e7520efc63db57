/*
 * `GET /v1/openapi.json`: the OpenAPI 3.1 description of the API
 * (openapi/openApiDocument.ts), on the public address and on every
 * tenant's, without a token. The route table hands itself in (the
 * description is made from it, and this file cannot import the table
 * that imports it). The text is built once per running service and kept.
 */
import type { Call } from '../call.js'
import { documentBody, type DescribedRoute } from '../openapi/openApiDocument.js'
import type { ApiResponse } from '../response.js'

export async function openApiAnswer(call: Call, routes: readonly DescribedRoute[]): Promise<ApiResponse> {
  return { status: 200, headers: { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-cache' }, body: documentBody(call.services, routes) }
}
