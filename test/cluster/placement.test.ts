/*
 * Where tenants settle (issue 28, "tenants settle where HAProxy sends
 * them"): a sign-up is a public call, which HAProxy routes by the public
 * host, so it lands on one node for every tenant; the node that created a
 * tenant gives its lease back at once, and the tenant's own requests
 * (routed by its host) claim it on the node they land on. Eight tenants
 * signed up through HAProxy and then used through it are served with no
 * request forwarded, and they are spread over both nodes (eight hosts all
 * hashing to one of two nodes has a chance of 1 in 128).
 */
import t from 'tap'
import type { HttpForwarder } from '../../src/cluster/httpForwarder.js'
import { startInProcessCluster } from '../helpers/cluster.js'
import { tempDataDir } from '../helpers/server.js'
import { installed } from '../helpers/systemPrograms.js'

if (installed(t, ['postgresql', 'haproxy'])) {
  const TENANTS = Array.from({ length: 8 }, (_, index) => `settle-${index}`)

  t.test('tenants signed up through HAProxy are served where HAProxy sends their requests, without forwards', async (t) => {
    const cluster = await startInProcessCluster(tempDataDir('placement'))
    t.teardown(() => cluster.stop())
    const forwards = () => cluster.services.map(({ services }) => (services.forwarder as HttpForwarder | null)?.forwards ?? 0)
    for (const tenant of TENANTS) {
      const { token } = await cluster.client.createTenant(tenant)
      for (let index = 0; index < 3; index += 1) {
        const listed = await cluster.client.request('GET', '/v1/time/projects', { tenant, query: { token } })
        t.equal(listed.status, 200, `${tenant}: a read through HAProxy`)
      }
    }
    t.same(forwards(), [0, 0], 'no node forwarded a request: each tenant lives where HAProxy sends it')
    const holders = cluster.services.map(({ services }) => [...services.registry.active()].filter((actor) => TENANTS.includes(actor.tenant)).length)
    t.equal(
      holders.reduce((sum, count) => sum + count, 0),
      TENANTS.length,
      'every tenant is active on exactly one node',
    )
    t.ok(
      holders.every((count) => count > 0),
      `both nodes hold tenants (${holders.join(' and ')})`,
    )
  })
}
