/*
 * Health checks on the admin listener, answered without the admin key so
 * that load balancers and orchestrators can call them: /healthz is 200
 * while the process runs; /readyz is 200 only when Readiness says ready,
 * else 503 with the phase (starting, stopping).
 */
import type { AdminServer } from './adminServer.js'
import { jsonAnswer } from './adminServer.js'
import type { Readiness } from './readiness.js'

export function registerHealthRoutes(admin: AdminServer, readiness: Readiness): void {
  admin.route('GET', '/healthz', () => jsonAnswer(200, { status: 'alive' }), { public: true })
  admin.route('GET', '/readyz', () => jsonAnswer(readiness.ready ? 200 : 503, { status: readiness.phase }), { public: true })
}
