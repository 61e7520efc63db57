/*
 * `GET /v1/openapi.json`: the OpenAPI 3.1 description of the API
 * (openapi/openApiDocument.ts), on the public address and on every
 * tenant's, without a token; with `tags=` a part of it (the outline, or the
 * operations of some tags: openapi/documentParts.ts), which the reference
 * page loads. The route table hands itself in (the description is made
 * from it, and this file cannot import the table that imports it). The
 * text is built once per running service and kept.
 */
import type { Call } from '../call.js'
import { documentPartBody } from '../openapi/documentParts.js'
import { documentBody, type DescribedRoute } from '../openapi/openApiDocument.js'
import type { ApiResponse } from '../response.js'

export async function openApiAnswer(call: Call, routes: readonly DescribedRoute[]): Promise<ApiResponse> {
  const tags = call.request.query.get('tags')
  const whole = () => documentBody(call.services, routes)
  const body = tags === undefined ? whole() : documentPartBody(call.services.config, whole, tags)
  return { status: 200, headers: { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-cache' }, body }
}
