/*
 * Request counters of the public front end, by route, method and status,
 * with a latency histogram per route and method. A route is an interned
 * RouteLabel (the route-table pattern, never the raw path, so the number of
 * series stays bounded), looked up by identity; methods outside the usual
 * set count as OTHER. Observing allocates only the first time a
 * route/method pair is seen.
 */
import { Histogram, LATENCY_BUCKETS_SECONDS } from './histogram.js'

export interface RouteLabel {
  /** The route pattern, e.g. `/v1/time/projects/:id`, or `unmatched`. */
  readonly route: string
  /** Where the route lives: on a tenant's host, the public host, or neither (refused before routing). */
  readonly scope: 'tenant' | 'public' | 'none'
}

/** Requests answered before a route was found (unknown host, bad path, oversize body, no such resource). */
export const UNMATCHED_ROUTE: RouteLabel = { route: 'unmatched', scope: 'none' }

const KNOWN_METHODS = new Set(['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS'])

export class RouteStats {
  /** Answers by HTTP status (sparse: only statuses seen). */
  readonly byStatus: Record<number, number> = {}
  readonly latencySeconds = new Histogram(LATENCY_BUCKETS_SECONDS)

  constructor(
    readonly label: RouteLabel,
    readonly method: string,
  ) {}
}

export class RequestMetrics {
  private readonly routes = new Map<RouteLabel, Map<string, RouteStats>>()
  inFlight = 0

  observe(label: RouteLabel, rawMethod: string, status: number, durationMs: number): void {
    let byMethod = this.routes.get(label)
    if (byMethod === undefined) {
      byMethod = new Map()
      this.routes.set(label, byMethod)
    }
    const method = KNOWN_METHODS.has(rawMethod) ? rawMethod : 'OTHER'
    let stats = byMethod.get(method)
    if (stats === undefined) {
      stats = new RouteStats(label, method)
      byMethod.set(method, stats)
    }
    stats.byStatus[status] = (stats.byStatus[status] ?? 0) + 1
    stats.latencySeconds.observe(durationMs / 1000)
  }

  *stats(): IterableIterator<RouteStats> {
    for (const byMethod of this.routes.values()) yield* byMethod.values()
  }
}
