/*
 * Fencing (issue 28, ARCHITECTURE.md §8): a node paused with SIGSTOP while it holds a
 * tenant and writes to it loses the tenant to another node once its lease
 * runs out; woken with SIGCONT, it must not acknowledge anything the log
 * did not take, and it drops the tenant.
 *
 * Each round: writers send creates straight to the owner's public port (no
 * HAProxy: they must reach the paused node); at a random moment the owner
 * is stopped; once its lease ran out (plus a random extra) writes go to the
 * other node, which takes the tenant over and acknowledges them; then the
 * paused node is continued and its pending requests come back. Whatever
 * either node acknowledged must be in the tenant afterwards, and the
 * tenant's state must equal a replay of its log: a third node started on
 * the database after the others are killed activates it from PostgreSQL
 * alone and must list the same objects. FENCING_ROUNDS rounds (20).
 */
import { randomUUID } from 'node:crypto'
import postgres from 'postgres'
import t from 'tap'
import { TestClient } from '../helpers/http.js'
import { allProjectIds, leaseRowOf, nodeOfOwner, spawnNode, startCluster, type ChildNode, type TestCluster } from '../helpers/cluster.js'
import { TEST_API_KEY } from '../helpers/server.js'
import { installed } from '../helpers/systemPrograms.js'

if (installed(t, ['postgresql', 'haproxy'])) {
  const ROUNDS = Number(process.env.FENCING_ROUNDS ?? 20)
  const LEASE_MS = 1_000
  const TENANT = 'fenced'
  const WRITERS = 4

  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

  /** Waits until the tenant's lease has run out by the database's clock (the paused owner can no longer renew it). */
  async function untilExpired(cluster: TestCluster, tenant: string): Promise<void> {
    const sql = postgres(cluster.databaseUrl, { max: 1, onnotice: () => undefined })
    try {
      for (;;) {
        const [row] = await sql<{ expired: boolean }[]>`SELECT expires_at <= now() AS expired FROM leases WHERE tenant = ${tenant}`
        if (row?.expired === true) return
        await sleep(20)
      }
    } finally {
      await sql.end()
    }
  }

  function ownerOf(cluster: TestCluster, tenant: string): Promise<{ owner: string; epoch: number } | undefined> {
    return leaseRowOf(cluster.databaseUrl, tenant)
  }

  function clientOf(node: ChildNode): TestClient {
    return new TestClient(node.port, TEST_API_KEY)
  }

  t.test('a paused owner never acknowledges what the new owner did not see', async (t) => {
    const cluster = await startCluster({ nodes: 2, leaseMs: LEASE_MS, env: { RATE_LIMIT_REQUESTS: '0' } })
    t.teardown(() => cluster.stop())
    const { token } = await cluster.client.createTenant(TENANT)
    const acked = new Set<string>()
    const ackedBy = { paused: 0, other: 0 }

    const write = async (client: TestClient, who: 'paused' | 'other') => {
      const id = randomUUID()
      const answer = await client.request('POST', '/v1/time/projects', { tenant: TENANT, query: { token }, body: { id, name: `p ${id}` }, timeoutMs: 20_000 }).catch(() => null)
      if (answer !== null && answer.status === 201) {
        acked.add(id)
        ackedBy[who] += 1
      }
    }

    for (let round = 0; round < ROUNDS; round += 1) {
      // Make sure some node holds the tenant, then find it.
      await write(cluster.client, 'other')
      const lease = await ownerOf(cluster, TENANT)
      const owner = nodeOfOwner(cluster.nodes, lease?.owner)
      const other = cluster.nodes.find((node) => node !== owner)
      if (owner === undefined || other === undefined || lease === undefined) throw new Error(`round ${round}: no owner (${JSON.stringify(lease)})`)

      let writing = true
      const inFlight: Promise<void>[] = []
      const burst = (async () => {
        while (writing) {
          inFlight.push(write(clientOf(owner), 'paused'))
          await sleep(Math.random() * 5)
        }
      })()
      await sleep(20 + Math.random() * 100)
      owner.child.kill('SIGSTOP')
      writing = false
      await burst
      await untilExpired(cluster, TENANT)
      await sleep(Math.random() * LEASE_MS)
      // The other node takes the tenant over and acknowledges writes.
      for (let index = 0; index < WRITERS; index += 1) await write(clientOf(other), 'other')
      const after = await ownerOf(cluster, TENANT)
      t.equal(nodeOfOwner(cluster.nodes, after?.owner)?.nodeId, other.nodeId, `round ${round}: the other node holds the tenant (lease ${JSON.stringify(after)})`)
      if (!t.ok((after?.epoch ?? 0) > lease.epoch, `round ${round}: the takeover moved the epoch`)) {
        for (const node of cluster.nodes) t.comment(`${node.nodeId}:\n${node.output().slice(-3000)}`)
      }
      owner.child.kill('SIGCONT')
      await Promise.all(inFlight)
    }
    t.comment(`acknowledged: ${ackedBy.paused} by nodes before or after a pause, ${ackedBy.other} by the other node`)
    // Each node was paused and overtaken at least once, and said so when it woke: it dropped the tenant.
    // (Its renewal finds the lease gone, or its pending append is fenced or ended with its transaction: either way it says so.)
    for (const node of cluster.nodes) t.match(node.output(), new RegExp(`tenant '${TENANT}'.*the tenant is dropped here`), `${node.nodeId} dropped the tenant it lost`)

    // Everything acknowledged is in the tenant, as the current owner serves it…
    const listed = await allProjectIds(cluster.client, TENANT, token)
    t.ok('ids' in listed, `listed: ${'ids' in listed ? '' : `${listed.status} ${listed.text.slice(0, 300)}`}`)
    if (!('ids' in listed)) for (const node of cluster.nodes) t.comment(`${node.nodeId}:\n${node.output().slice(-4000)}`)
    const served = 'ids' in listed ? listed.ids : new Set<string>()
    t.same(
      [...acked].filter((id) => !served.has(id)),
      [],
      `every acknowledged write is served (${acked.size})`,
    )

    // … and as a replay of the log alone gives it: a fresh node activates the tenant from PostgreSQL.
    for (const node of cluster.nodes) node.child.kill('SIGKILL')
    await sleep(LEASE_MS + 200)
    const fresh = await spawnNode(cluster.databaseUrl, 'replayer', LEASE_MS, { RATE_LIMIT_REQUESTS: '0' })
    t.teardown(() => void fresh.child.kill('SIGKILL'))
    const replayed = await allProjectIds(clientOf(fresh), TENANT, token)
    t.ok('ids' in replayed, 'the replay is listed')
    const replayedIds = 'ids' in replayed ? replayed.ids : new Set<string>()
    t.same(
      [...served].filter((id) => !replayedIds.has(id)),
      [],
      'the replay holds everything served',
    )
    t.same(
      [...replayedIds].filter((id) => !served.has(id)),
      [],
      'and nothing more',
    )
  })
}
