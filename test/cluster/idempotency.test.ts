/*
 * Idempotency-Key across a failover: every node of a two-node cluster is
 * armed to die by SIGKILL once a keyed write of its own is durable, before
 * its answer leaves (helpers/killAfterKeptWrite.ts). A keyed create kills
 * the node holding the tenant; the client, which heard no answer, retries
 * through HAProxy until the other node has claimed the tenant (its lease
 * ran out) and loaded it from the cluster's log: the retry answers the
 * first answer, kept in the same log entry as the write, and the tenant
 * holds one project.
 */
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import t from 'tap'
import { allProjectIds, startCluster } from '../helpers/cluster.js'
import type { TestResponse } from '../helpers/http.js'
import { REPO_ROOT } from '../helpers/server.js'
import { installed } from '../helpers/systemPrograms.js'

if (installed(t, ['postgresql', 'haproxy'])) {
  const KILL_AFTER_KEPT_WRITE = pathToFileURL(path.join(REPO_ROOT, 'dist', 'test', 'helpers', 'killAfterKeptWrite.js')).href
  const TENANT = 'failover-keys'

  t.test('a retry after the node holding the tenant died answers the kept answer from the other node', async (t) => {
    const cluster = await startCluster({ nodes: 2, leaseMs: 1_500, env: { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${KILL_AFTER_KEPT_WRITE}`.trim() } })
    t.teardown(() => cluster.stop())
    const { token } = await cluster.client.createTenant(TENANT)
    const create = (): Promise<TestResponse | null> =>
      cluster.client
        .request('POST', '/v1/time/projects', { tenant: TENANT, query: { token }, body: { name: 'across the failover' }, headers: { 'Idempotency-Key': 'failover-1' }, timeoutMs: 10_000 })
        .catch(() => null)

    const first = await create()
    t.not(first?.status, 201, 'the first answer never reached the client')
    const deadNodes = () => cluster.nodes.filter((node) => node.child.signalCode !== null || node.child.exitCode !== null)
    const exitDeadline = Date.now() + 10_000
    while (deadNodes().length === 0 && Date.now() < exitDeadline) await new Promise((resolve) => setTimeout(resolve, 20))
    t.same(
      deadNodes().map((node) => node.child.signalCode),
      ['SIGKILL'],
      'the node that stored the write died by SIGKILL',
    )

    const deadline = Date.now() + 30_000
    let retry: TestResponse | null = null
    while (Date.now() < deadline) {
      retry = await create()
      if (retry?.status === 201) break
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    t.equal(retry?.status, 201, 'the retry is answered once the other node holds the tenant')
    t.equal(retry?.headers['idempotent-replayed'], 'true', 'with the answer kept in the write’s log entry')
    const listed = await allProjectIds(cluster.client, TENANT, token)
    t.ok('ids' in listed && listed.ids.size === 1, 'one project')
    if ('ids' in listed) t.same([...listed.ids], [retry?.json.id], 'the one the kept answer names')
  })
}
