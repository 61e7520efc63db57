/*
 * The failover figure of the cluster benchmark (cluster.ts): the
 * 100,000-record fixture tenant is exported (embedded) and imported into a
 * fresh cluster database (tenantTransfer.ts); two nodes behind HAProxy
 * (clusterPair.ts) with the default LEASE_MS; a login through HAProxy
 * activates the tenant on the node HAProxy sends it to. Then FAILOVER_WRITERS
 * writers POST time records through HAProxy, one request at a time each,
 * retrying on a new connection after a failure; in each round the holding
 * node (read from the leases table) is killed with SIGKILL, and the time
 * from the kill to the first acknowledged write sent after it is taken,
 * with the time to the other node's claim of the lease beside it. The
 * killed node then comes back as a new incarnation for the next round.
 */
import { freshDatabase, nodeOfOwner } from '../test/helpers/cluster.js'
import type { PostgresServer } from '../test/helpers/postgresServer.js'
import { clusterLog, sleep } from './clusterLoad.js'
import { leaseOf, watchTakeover } from './clusterNodes.js'
import { startTwoNodes } from './clusterPair.js'
import { ensureFixture } from './generate.js'
import { BenchClient, withQuery } from './httpClient.js'
import { ownerLogin, timeRecordBody } from './scenarios.js'
import { exportFixtureTenant, importIntoCluster } from './tenantTransfer.js'

const FAILOVER_RECORDS = 100_000
/** Concurrent writers during a failover, and the pause of one after a failed write. */
const FAILOVER_WRITERS = 8
const WRITER_RETRY_MS = 20
/** How long writes run before the kill, and the longest wait for the first write after it. */
const BEFORE_KILL_MS = 3_000
const FAILOVER_LIMIT_MS = 60_000

interface FailoverRound {
  /** Kill to the first acknowledgement (seen within 5 ms) of a write sent after the kill, through HAProxy. */
  killToFirstWriteMs: number
  /** How much of the dead owner's lease was left at the kill (by PostgreSQL's clock). */
  leaseLeftAtKillMs: number
  /** Kill to the first read of the lease row naming another owner (polled every 25 ms): the claim; the rest is activation. */
  killToClaimMs: number | null
  /** Writes sent before the kill and acknowledged, since the writers started (all rounds so far). */
  writesBefore: number
}

export interface FailoverFigures {
  records: number
  exportMs: number
  exportBytes: number
  importMs: number
  firstActivationMs: number
  rounds: FailoverRound[]
}

export async function failover(pg: PostgresServer, rounds: number): Promise<FailoverFigures> {
  const fixture = await ensureFixture(FAILOVER_RECORDS)
  clusterLog(`failover: exporting the ${FAILOVER_RECORDS}-record tenant …`)
  const exported = await exportFixtureTenant(FAILOVER_RECORDS, fixture.tenant)
  const databaseUrl = await freshDatabase(pg, `bench_failover_${Date.now()}`)
  const importMs = await importIntoCluster(exported.file, databaseUrl)
  exported.remove()
  clusterLog(`exported in ${exported.exportMs.toFixed(0)} ms (${exported.bytes} bytes), imported into PostgreSQL in ${importMs.toFixed(0)} ms`)
  const two = await startTwoNodes(databaseUrl)
  const { nodes } = two
  const clients: BenchClient[] = []
  try {
    const loginClient = new BenchClient(two.haproxy.port)
    const { token, ms: firstActivationMs } = await ownerLogin(loginClient, fixture)
    loginClient.close()
    clusterLog(`first login through HAProxy (activates the tenant from PostgreSQL): ${firstActivationMs.toFixed(0)} ms`)
    const projectId = fixture.projects[0]?.id as string
    /** When each acknowledged write was sent. A write sent before the kill may still be answered after it. */
    const acked: number[] = []
    let stopping = false
    const writer = async (index: number) => {
      let client = new BenchClient(two.haproxy.port)
      clients.push(client)
      for (let seq = 0; !stopping; seq += 1) {
        const sentAtMs = Date.now()
        const answer = await client
          .request('POST', withQuery('/v1/time/timerecords', { token }), { tenant: fixture.tenant, body: timeRecordBody(projectId, index * 1_000_000 + seq) })
          .catch(() => null)
        if (answer?.status === 201) acked.push(sentAtMs)
        else {
          // A socket that failed is not reused: a new client (connection) for the next try.
          client.close()
          client = new BenchClient(two.haproxy.port)
          clients.push(client)
          await sleep(WRITER_RETRY_MS)
        }
      }
    }
    const writers = Array.from({ length: FAILOVER_WRITERS }, (_, index) => writer(index))
    const roundsOut: FailoverRound[] = []
    try {
      for (let round = 1; round <= rounds; round += 1) {
        await sleep(BEFORE_KILL_MS)
        const lease = await leaseOf(databaseUrl, fixture.tenant)
        const victim = nodeOfOwner(nodes, lease?.owner)
        if (victim === undefined || lease === null) throw new Error(`no node holds ${fixture.tenant} (owner ${lease?.owner})`)
        const killedAtMs = Date.now()
        const writesBefore = acked.filter((at) => at < killedAtMs).length
        victim.kill()
        const deadline = killedAtMs + FAILOVER_LIMIT_MS
        const takeover = watchTakeover(databaseUrl, fixture.tenant, lease.owner, deadline)
        const sentAfterKill = () => acked.filter((at) => at > killedAtMs)
        while (sentAfterKill().length === 0 && Date.now() < deadline) await sleep(5)
        const firstAckMs = Date.now()
        if (sentAfterKill().length === 0) throw new Error(`round ${round}: no write acknowledged within ${FAILOVER_LIMIT_MS} ms of the kill`)
        const claimedAtMs = await takeover
        const figure = {
          killToFirstWriteMs: firstAckMs - killedAtMs,
          leaseLeftAtKillMs: lease.expiresAtMs - killedAtMs,
          killToClaimMs: claimedAtMs === null ? null : claimedAtMs - killedAtMs,
          writesBefore,
        }
        roundsOut.push(figure)
        clusterLog(
          `failover round ${round}: killed ${victim.nodeId}; lease claimed by another node after ${figure.killToClaimMs ?? '?'} ms; first acknowledged write after ${figure.killToFirstWriteMs} ms (the lease had ${figure.leaseLeftAtKillMs} ms left)`,
        )
        // The dead node comes back (a new incarnation), so the next round has somewhere to go.
        if (round < rounds) await two.replaceNode(nodes.indexOf(victim))
      }
    } finally {
      stopping = true
      await Promise.all(writers)
    }
    return { records: FAILOVER_RECORDS, exportMs: exported.exportMs, exportBytes: exported.bytes, importMs, firstActivationMs, rounds: roundsOut }
  } finally {
    for (const client of clients) client.close()
    await two.stop()
  }
}
