/*
 * Node loss (issue 28): 8 writers on 4 tenants write through HAProxy to a
 * two-node cluster; the node holding the first tenant is killed with
 * SIGKILL. Writes resume through HAProxy once the dead node's leases run
 * out and the other node claims its tenants; every write acknowledged
 * before or after the kill is there afterwards. The time from the kill to
 * the first acknowledged write of a tenant the dead node held is printed.
 *
 * A write is a project created with an id of the writer's choosing, so a
 * write whose answer was lost is known too: it may have landed or not, but
 * an acknowledged one must be there.
 */
import { randomUUID } from 'node:crypto'
import t from 'tap'
import { allProjectIds, leaseRowOf, nodeOfOwner, startCluster, type TestCluster } from '../helpers/cluster.js'
import { installed } from '../helpers/systemPrograms.js'

if (installed(t, ['postgresql', 'haproxy'])) {
  const TENANTS = ['loss-a', 'loss-b', 'loss-c', 'loss-d']
  const WRITERS_PER_TENANT = 2
  /** How long the writers run before the kill, and after the first acknowledged write following it. */
  const BEFORE_KILL_MS = 1_500
  const AFTER_RECOVERY_MS = 1_500
  const LEASE_MS = 1_500

  interface Acked {
    tenant: string
    id: string
    sentAtMs: number
    atMs: number
  }

  async function ownerOf(cluster: TestCluster, tenant: string): Promise<string | undefined> {
    return (await leaseRowOf(cluster.databaseUrl, tenant))?.owner
  }

  t.test('killing the node that holds tenants loses no acknowledged write, and writes resume', async (t) => {
    const cluster = await startCluster({ nodes: 2, leaseMs: LEASE_MS, env: { RATE_LIMIT_REQUESTS: '0' } })
    t.teardown(() => cluster.stop())
    const tokens = new Map<string, string>()
    for (const tenant of TENANTS) tokens.set(tenant, (await cluster.client.createTenant(tenant)).token)

    const acked: Acked[] = []
    let stopping = false
    const writer = async (tenant: string) => {
      while (!stopping) {
        const id = randomUUID()
        const sentAtMs = Date.now()
        const answer = await cluster.client
          .request('POST', '/v1/time/projects', { tenant, query: { token: tokens.get(tenant) as string }, body: { id, name: `p ${id}` }, timeoutMs: 10_000 })
          .catch(() => null)
        if (answer !== null && answer.status === 201) acked.push({ tenant, id, sentAtMs, atMs: Date.now() })
        else await new Promise((resolve) => setTimeout(resolve, 20))
      }
    }
    const writers = TENANTS.flatMap((tenant) => Array.from({ length: WRITERS_PER_TENANT }, () => writer(tenant)))

    await new Promise((resolve) => setTimeout(resolve, BEFORE_KILL_MS))
    const victimId = await ownerOf(cluster, TENANTS[0] as string)
    const victim = nodeOfOwner(cluster.nodes, victimId)
    if (victim === undefined) throw new Error(`no node holds ${TENANTS[0]} (owner ${victimId})`)
    const moved = new Set<string>()
    for (const tenant of TENANTS) if ((await ownerOf(cluster, tenant)) === victimId) moved.add(tenant)
    const killedAtMs = Date.now()
    victim.child.kill('SIGKILL')

    const deadline = Date.now() + 30_000
    // A write sent before the kill may have been acknowledged by the dead node just before it died: only later ones count.
    const firstAfter = () => acked.find((write) => write.sentAtMs > killedAtMs && moved.has(write.tenant))
    while (firstAfter() === undefined && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
    const first = firstAfter()
    t.ok(first !== undefined, 'writes of the dead node’s tenants resume')
    if (first !== undefined) t.comment(`kill to first acknowledged write on the new node: ${first.atMs - killedAtMs} ms (lease ${LEASE_MS} ms)`)
    await new Promise((resolve) => setTimeout(resolve, AFTER_RECOVERY_MS))
    stopping = true
    await Promise.all(writers)

    t.ok(acked.filter((write) => write.atMs < killedAtMs).length > 0, 'writes were acknowledged before the kill')
    for (const tenant of TENANTS) {
      const listed = await allProjectIds(cluster.client, tenant, tokens.get(tenant) as string)
      t.ok('ids' in listed, `${tenant}: listed`)
      const ids = 'ids' in listed ? listed.ids : new Set<string>()
      const lost = acked.filter((write) => write.tenant === tenant && !ids.has(write.id))
      t.same(lost, [], `${tenant}: every acknowledged write is there (${acked.filter((write) => write.tenant === tenant).length} acknowledged)`)
    }
    for (const tenant of moved) t.not(await ownerOf(cluster, tenant), victimId, `${tenant} moved off the dead node`)
  })
}
