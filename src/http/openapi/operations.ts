/*
 * The pieces of an OpenAPI operation the path builders share: answers in
 * JSON (and the same data in XML), the error answers (every 4xx and 5xx
 * has the error body of design §4), plain-text answers, and the security
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

export function textAnswer(description: string, schema: JsonSchema = { type: 'string' }): Record<string, unknown> {
  return { description, content: { 'text/plain': { schema } } }
}

/** The error answers of every operation: the body of design §4 for any 4xx and 5xx. */
export const ERROR_ANSWERS: Record<string, unknown> = { '4XX': { $ref: '#/components/responses/Error' }, '5XX': { $ref: '#/components/responses/Error' } }

/** The answers of an operation: `answers` and the error answers. */
export function answers(byStatus: Record<string, unknown>): Record<string, unknown> {
  return { ...byStatus, ...ERROR_ANSWERS }
}

/** A JSON request body (XML too, with Content-Type: application/xml). */
export function jsonBody(schema: JsonSchema, description: string, required = true): Record<string, unknown> {
  return { description, required, content: { 'application/json': { schema }, 'application/xml': { schema: { type: 'string' } } } }
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
