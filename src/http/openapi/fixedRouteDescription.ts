/*
 * The description of one fixed route, keyed by method and pattern in the
 * tables of fixedRouteDescriptions.ts and the files it joins
 * (importDescriptions.ts, calendarDescriptions.ts); openApiDocument.ts
 * makes an operation of it.
 */
import type { Parameter } from './parameters.js'

export interface FixedRouteDescription {
  readonly summary: string
  readonly description?: string
  readonly tag: string
  /** Credentials other than the token of a signed-in user (which `auth: true` routes take). */
  readonly security?: Record<string, string[]>[]
  readonly query?: readonly (Parameter | { $ref: string })[]
  readonly body?: Record<string, unknown>
  readonly answers: Record<string, unknown>
  /** The path as clients write it, when it is not the pattern's (`openapi` is asked for as `openapi.json`). */
  readonly documentedPath?: string
}
