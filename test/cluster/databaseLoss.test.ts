/*
 * Database loss (issue 28): PostgreSQL runs as a primary with a synchronous
 * streaming standby (a COMMIT returns only once the standby flushed it).
 * The nodes are given ONE DATABASE_URL naming both servers with
 * target_session_attrs=read-write, so the client connects to whichever of
 * them accepts writes. 8 writers on 4 tenants write through HAProxy to two
 * nodes; the primary is killed (immediate stop: what a crash leaves) and
 * the standby promoted. The nodes reconnect by themselves and writes
 * resume; every write acknowledged before or after the kill is there
 * afterwards, read through HAProxy, and again after every node was
 * restarted, i.e. from the promoted database alone. A tenant created on
 * one node after the promotion reaches the other's directory mirror: the
 * mirror's LISTEN found the new primary too.
 *
 * The time from the kill to the first acknowledged write sent after it is
 * printed (promote() blocks this process while it runs: nothing is sent
 * during it), and so are the statuses of the writes not acknowledged. A
 * write is a project created with an id of the writer's choosing, so an
 * acknowledged one is known by its id.
 */
import { randomUUID } from 'node:crypto'
import t from 'tap'
import { allProjectIds, freshDatabase, spawnNode, startHaproxy, untilServed, type ChildNode, type Haproxy } from '../helpers/cluster.js'
import { TestClient } from '../helpers/http.js'
import { startPostgres } from '../helpers/postgresServer.js'
import { TEST_API_KEY } from '../helpers/server.js'
import { installed } from '../helpers/systemPrograms.js'

if (installed(t, ['postgresql', 'haproxy'])) {
  const TENANTS = ['dbloss-a', 'dbloss-b', 'dbloss-c', 'dbloss-d']
  const WRITERS_PER_TENANT = 2
  const NODES = 2
  const LEASE_MS = 1_500
  /** How long the writers run before the kill, and after the first acknowledged write following it. */
  const BEFORE_KILL_MS = 1_500
  const AFTER_RECOVERY_MS = 1_500
  /** How long writes may take to resume after the kill before the test fails. */
  const RESUME_TIMEOUT_MS = 60_000
  /** Settings of every node beyond the cluster's: no rate limit (the writers are fast). */
  const NODE_SETTINGS = { RATE_LIMIT_REQUESTS: '0' }

  interface Acked {
    tenant: string
    id: string
    sentAtMs: number
    atMs: number
  }

  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

  t.test('killing the PostgreSQL primary and promoting its synchronous standby loses no acknowledged write', async (t) => {
    const pg = await startPostgres({ standby: true })
    const standby = pg.standby
    if (standby === undefined) throw new Error('startPostgres gave no standby')
    const nodes: ChildNode[] = []
    let haproxy: Haproxy | null = null
    t.teardown(async () => {
      await haproxy?.stop()
      for (const node of nodes) if (node.child.exitCode === null && node.child.signalCode === null) node.child.kill('SIGKILL')
      pg.stop()
    })

    // Made on the primary; the synchronous standby has it once CREATE DATABASE returned.
    const name = new URL(await freshDatabase(pg, `dbloss_${process.pid}_${Date.now()}`)).pathname.slice(1)
    const databaseUrl = `postgres://postgres@127.0.0.1:${pg.port},127.0.0.1:${standby.port}/${name}?target_session_attrs=read-write`
    for (let index = 0; index < NODES; index += 1) nodes.push(await spawnNode(databaseUrl, `node${index + 1}`, LEASE_MS, NODE_SETTINGS))
    haproxy = await startHaproxy(nodes.map((node) => node.port))
    let client = new TestClient(haproxy.port, TEST_API_KEY)
    await untilServed(client)

    const tokens = new Map<string, string>()
    for (const tenant of TENANTS) tokens.set(tenant, (await client.createTenant(tenant)).token)

    const acked: Acked[] = []
    /** The status of each answer other than 201 ('none': no answer). */
    const refused: (number | 'none')[] = []
    let stopping = false
    const writer = async (tenant: string) => {
      while (!stopping) {
        const id = randomUUID()
        const sentAtMs = Date.now()
        const answer = await client.request('POST', '/v1/time/projects', { tenant, query: { token: tokens.get(tenant) as string }, body: { id, name: `p ${id}` }, timeoutMs: 20_000 }).catch(() => null)
        if (answer !== null && answer.status === 201) acked.push({ tenant, id, sentAtMs, atMs: Date.now() })
        else {
          refused.push(answer?.status ?? 'none')
          await sleep(20)
        }
      }
    }
    const writers = TENANTS.flatMap((tenant) => Array.from({ length: WRITERS_PER_TENANT }, () => writer(tenant)))

    await sleep(BEFORE_KILL_MS)
    const killedAtMs = Date.now()
    pg.promote()
    const promotedAtMs = Date.now()

    const firstAfter = () => acked.find((write) => write.sentAtMs > killedAtMs)
    const deadline = Date.now() + RESUME_TIMEOUT_MS
    while (firstAfter() === undefined && Date.now() < deadline) await sleep(20)
    const first = firstAfter()
    t.ok(first !== undefined, 'writes resume on the promoted standby')
    if (first !== undefined) t.comment(`kill of the primary to the first acknowledged write: ${first.atMs - killedAtMs} ms (promotion ${promotedAtMs - killedAtMs} ms of it)`)
    const resumed = new Set<string>()
    const everyTenantDeadline = Date.now() + RESUME_TIMEOUT_MS
    while (resumed.size < TENANTS.length && Date.now() < everyTenantDeadline) {
      for (const write of acked) if (write.sentAtMs > killedAtMs) resumed.add(write.tenant)
      await sleep(50)
    }
    t.same([...resumed].sort(), TENANTS, 'every tenant takes writes again')
    await sleep(AFTER_RECOVERY_MS)
    stopping = true
    await Promise.all(writers)

    t.ok(acked.filter((write) => write.atMs < killedAtMs).length > 0, 'writes were acknowledged before the kill')
    const refusedByStatus = new Map<number | 'none', number>()
    for (const status of refused) refusedByStatus.set(status, (refusedByStatus.get(status) ?? 0) + 1)
    t.comment(`writes not acknowledged (status: count): ${[...refusedByStatus].map(([status, count]) => `${status}: ${count}`).join(', ') || 'none'}`)
    const everyAcknowledgedWriteIsThere = async (when: string) => {
      for (const tenant of TENANTS) {
        const listed = await allProjectIds(client, tenant, tokens.get(tenant) as string, 20_000)
        t.ok('ids' in listed, `${when}, ${tenant}: listed`)
        const ids = 'ids' in listed ? listed.ids : new Set<string>()
        const lost = acked.filter((write) => write.tenant === tenant && !ids.has(write.id))
        t.same(lost, [], `${when}, ${tenant}: every acknowledged write is there (${acked.filter((write) => write.tenant === tenant).length} acknowledged)`)
      }
    }
    await everyAcknowledgedWriteIsThere('after the promotion')

    // The directory mirror's listener reconnected too: a tenant created on one node reaches the other's mirror, which
    // `checkemail` reads (it never asks the database).
    for (const [from, to] of [
      [0, 1],
      [1, 0],
    ] as const) {
      const email = `owner.${from}@after-promotion.test`
      await (nodes[from] as ChildNode).client.createTenant(`dbloss-new-${from}`, email)
      const seenDeadline = Date.now() + 10_000
      let seen = false
      while (!seen && Date.now() < seenDeadline) {
        const known = await (nodes[to] as ChildNode).client.request('GET', '/v1/register/checkemail', { query: { apikey: TEST_API_KEY, email } })
        seen = known.status === 200 && (known.json as { exists?: boolean }).exists === true
        if (!seen) await sleep(50)
      }
      t.ok(seen, `a tenant created on node${from + 1} after the promotion reaches node${to + 1}'s directory mirror`)
    }

    // From the promoted database alone: new nodes and a new HAProxy, nothing of the old processes' memory. (New ports:
    // the old ones may sit in TIME_WAIT, and a node listens on its port exclusively, without SO_REUSEADDR.)
    await haproxy.stop()
    for (const node of nodes.splice(0)) {
      if (node.child.exitCode !== null || node.child.signalCode !== null) continue
      await new Promise((resolve) => {
        node.child.once('exit', resolve)
        node.child.kill('SIGKILL')
      })
    }
    // Their leases were live: the new nodes claim the tenants once they ran out.
    await sleep(LEASE_MS)
    for (let index = 0; index < NODES; index += 1) nodes.push(await spawnNode(databaseUrl, `node${index + 1}`, LEASE_MS, NODE_SETTINGS))
    haproxy = await startHaproxy(nodes.map((node) => node.port))
    client = new TestClient(haproxy.port, TEST_API_KEY)
    await untilServed(client)
    await everyAcknowledgedWriteIsThere('after restarting every node')
  })
}
