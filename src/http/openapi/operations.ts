/*
 * The pieces of an OpenAPI operation the path builders share: answers in
 * JSON (and the same data in XML), the error answers (every 4xx and 5xx
 * has the error body of ARCHITECTURE.md §4), plain-text answers, and the security
 * requirements (token or Bearer for the calls of a signed-in user; the
 * API key for the public calls; the API key and Basic for login).
 */
import type { JsonSchema } from './jsonSchema.js'
import type { Parameter } from './parameters.js'

export type Operation = {
  operationId: string
  summary: string
  description?: string
  tags: string[]
  parameters?: (Parameter | { $ref: string })[]
  requestBody?: Record<string, unknown>
  responses: Record<string, unknown>
  security?: Record<string, string[]>[]
  servers?: { url: string; description?: string }[]
}

/** Answers: the data in JSON and in XML (`format=xml` or `Accept: application/xml`). */
export function dataAnswer(description: string, schema: JsonSchema): Record<string, unknown> {
  return { description, content: { 'application/json': { schema }, 'application/xml': { schema: { type: 'string', description: 'the same data as XML' } } } }
}

/** A list, summary or report: also a file, CSV or XLSX (`format=csv|xlsx` or the Accept header), streamed. */
export function exportable(answer: Record<string, unknown>): Record<string, unknown> {
  const content = answer.content as Record<string, unknown>
  return {
    ...answer,
    content: {
      ...content,
      'text/csv': { schema: { type: 'string', description: 'RFC 4180, UTF-8, a header row; dates ISO 8601 in the account’s time zone' } },
      'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': { schema: { type: 'string', format: 'binary' } },
    },
  }
}

export function textAnswer(description: string, schema: JsonSchema = { type: 'string' }): Record<string, unknown> {
  return { description, content: { 'text/plain': { schema } } }
}

/** The answer headers `names` (components.headers) added to an answer. */
export function withHeaders(answer: Record<string, unknown>, names: readonly string[]): Record<string, unknown> {
  return { ...answer, headers: Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${name}` }])) }
}

/** The answer to a conditional GET whose If-None-Match names the current ETag. */
export const NOT_MODIFIED: Record<string, unknown> = withHeaders({ description: 'not modified: the ETag of If-None-Match is still current (no body)' }, ['ETag'])

/** The headers of the answers, referred to by name (withHeaders). */
export const ANSWER_HEADERS: Record<string, { description: string; schema: JsonSchema }> = {
  ETag: { description: 'the answer’s validator, for If-None-Match (and If-Match on an object: its version leads the tag); a list’s tag is weak', schema: { type: 'string' } },
  'X-Total-Count': { description: 'with $inlinecount=allpages: the number of matching objects on all pages', schema: { type: 'integer', minimum: 0 } },
  Link: { description: 'the next page (`rel="next"`, when objects remain after this page) and the previous one (`rel="prev"`)', schema: { type: 'string' } },
  'RateLimit-Limit': { description: 'requests the caller may make in the window (authenticated answers)', schema: { type: 'integer' } },
  'RateLimit-Remaining': { description: 'requests left in the window', schema: { type: 'integer' } },
  'RateLimit-Reset': { description: 'seconds until the window starts anew', schema: { type: 'integer' } },
  'RateLimit-Policy': { description: 'the limit and its window, e.g. `500;w=10`', schema: { type: 'string' } },
  'X-Request-Id': { description: 'the request’s id (the one the client sent, when it is a token of 1–128 of [A-Za-z0-9._:-]), also named in a 5xx’s description', schema: { type: 'string' } },
}

/** The error answers of every operation: the body of ARCHITECTURE.md §4 for any 4xx and 5xx. */
const ERROR_ANSWERS: Record<string, unknown> = { '4XX': { $ref: '#/components/responses/Error' }, '5XX': { $ref: '#/components/responses/Error' } }

/** The answers of an operation: `answers` and the error answers. */
export function answers(byStatus: Record<string, unknown>): Record<string, unknown> {
  return { ...byStatus, ...ERROR_ANSWERS }
}

/** A JSON request body (XML too, with Content-Type: application/xml). */
export function jsonBody(schema: JsonSchema, description: string, required = true): Record<string, unknown> {
  return { description, required, content: { 'application/json': { schema }, 'application/xml': { schema: { type: 'string' } } } }
}

/** A PATCH's body: a JSON Merge Patch (RFC 7396) of the object, as `application/merge-patch+json` or plain JSON (or XML). */
export function mergePatchBody(schema: JsonSchema, description: string): Record<string, unknown> {
  return { description, required: true, content: { 'application/merge-patch+json': { schema }, 'application/json': { schema }, 'application/xml': { schema: { type: 'string' } } } }
}

/** The caller signs in with a token: query parameter `token` or `Authorization: Bearer`. */
export const SIGNED_IN: Record<string, string[]>[] = [{ token: [] }, { bearer: [] }]
/** Public calls: the API key (query or X-Api-Key header), no token. */
export const WITH_API_KEY: Record<string, string[]>[] = [{ apikey: [] }, { apikeyHeader: [] }]
/** Login: the API key and Basic credentials (e-mail and password, or a secret key with no password). */
export const LOGIN: Record<string, string[]>[] = [
  { apikey: [], basic: [] },
  { apikeyHeader: [], basic: [] },
]
/** No credentials at all. */
export const OPEN: Record<string, string[]>[] = [{}]

/** A readable operation id from a method and a path: `GET time/projects/{id}` → `getTimeProjectsById`. */
export function operationIdOf(method: string, path: string): string {
  const words = path
    .split('/')
    .filter((part) => part !== '')
    .map((part) => (part.startsWith('{') ? `by ${part.slice(1, -1)}` : part))
    .join(' ')
    .replace(/[$@]/g, ' ')
    .split(/[^A-Za-z0-9]+/)
    .filter((word) => word !== '')
  return method.toLowerCase() + words.map((word) => word.charAt(0).toUpperCase() + word.slice(1)).join('')
}
