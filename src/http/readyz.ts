/*
 * `GET /readyz` (and HEAD), outside /v1: the load balancer's health check on
 * the API listener (HTTP/1.0 too), answered before anything else is read of
 * the request. admin/readiness.ts says whether the service is ready: 200, or
 * 503 while it starts or stops, with the phase it is in.
 */
import type { ApiResponse } from './response.js'

/** The path of the health check, outside /v1. */
const READYZ_PATH = '/readyz'

/** What `GET /readyz` answers on this listener (admin/readiness.ts). */
export interface ReadinessProbe {
  readonly ready: boolean
  readonly phase: string
}

/** The answer to a health check at `url`; null: the request is not one. */
export function readinessAnswer(probe: ReadinessProbe, url: string, method: string): ApiResponse | null {
  if (url !== READYZ_PATH || (method !== 'GET' && method !== 'HEAD')) return null
  return { status: probe.ready ? 200 : 503, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ status: probe.phase }) }
}
