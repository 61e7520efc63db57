/*
 * What a cluster node's snapshot write of a large tenant costs the other
 * tenants on that node: the longest the event loop is held while
 * PgSnapshots.write stores the tenant's snapshot in PostgreSQL, measured
 * in a process of its own as a node does it. The process takes the tenant
 * as its only writer (clusterTools.ts asTenantWriter: the lease claimed,
 * so the write is fenced like a node's), recovers it, and writes a
 * snapshot at its sequence number (replacing the one there) while a 1 ms
 * timer notes the longest gap between its turns. Prints one line
 * `SNAPSHOT_WRITE {json}`.
 *
 *   node dist/bench/clusterSnapshotWrite.js --database-url postgres://… --tenant bench [--rounds 2]
 */
import { loadConfig } from '../src/config.js'
import { asTenantWriter, withClusterStore } from '../src/cluster/clusterTools.js'
import { snapshotSourceOf } from '../src/tenants/recovery.js'
import { TenantActor } from '../src/tenants/tenantActor.js'
import { scriptArgs } from './cliOptions.js'
import { clusterSettings } from './clusterNodes.js'
import { NO_AUTO_SNAPSHOTS } from './serverProcess.js'

export interface SnapshotWriteFigures {
  /** Per round: the write's wall time, the longest gap between two turns of a 1 ms timer meanwhile, and the most CPU time within one gap. */
  rounds: { writeMs: number; longestStallMs: number; longestBusyMs: number; bytes: number }[]
}

const STALL_TIMER_MS = 1

const args = scriptArgs({
  usage: 'node dist/bench/clusterSnapshotWrite.js --database-url <url> --tenant <name> [--rounds <n>]',
  about: "A cluster node's snapshot write of one tenant: its time and the longest event-loop stall meanwhile; prints SNAPSHOT_WRITE {json}.",
  options: {
    'database-url': { value: '<url>', help: 'the cluster database (required)' },
    tenant: { value: '<name>', help: 'the tenant to snapshot (required; no node may hold it)' },
    rounds: { value: '<n>', help: 'snapshots written one after the other (default 2)' },
  },
})
const databaseUrl = args.text('database-url') ?? args.refuse('--database-url is required')
const tenant = args.text('tenant') ?? args.refuse('--tenant is required')
const rounds = args.positiveInteger('rounds', 2)
const config = loadConfig({ ...NO_AUTO_SNAPSHOTS, ...clusterSettings(databaseUrl, 'bench-snapshot-write', null), DATA_DIR: '/nonexistent', API_KEYS: 'unused', QUIET: '1' })
const cluster = config.cluster
if (cluster === null) throw new Error('not a cluster configuration')

/**
 * `work`, with the longest gap between two turns of a 1 ms timer while it runs, and the longest CPU time the process
 * spent within one such gap: on a shared machine a gap may be a turn of another process, which the CPU time tells apart
 * (it counts the process's other threads too: the collector's helpers).
 */
async function timedWithStalls<T>(work: () => Promise<T>): Promise<{ result: T; ms: number; longestStallMs: number; longestBusyMs: number }> {
  let longestStallMs = 0
  let longestBusyMs = 0
  let lastTick = performance.now()
  let lastCpu = process.cpuUsage()
  const tick = () => {
    const now = performance.now()
    const cpu = process.cpuUsage(lastCpu)
    longestStallMs = Math.max(longestStallMs, now - lastTick)
    longestBusyMs = Math.max(longestBusyMs, Math.min(now - lastTick, (cpu.user + cpu.system) / 1000))
    lastTick = now
    lastCpu = process.cpuUsage()
  }
  const timer = setInterval(tick, STALL_TIMER_MS)
  const started = performance.now()
  try {
    const result = await work()
    tick()
    return { result, ms: performance.now() - started, longestStallMs, longestBusyMs }
  } finally {
    clearInterval(timer)
  }
}

const figures = await withClusterStore(cluster, (store) =>
  asTenantWriter(store, cluster, tenant, false, async () => {
    const actor = TenantActor.recover(tenant, config, store)
    const state = actor.state
    if (state.seq < 1) throw new Error(`${tenant}: nothing recovered`)
    const measured: SnapshotWriteFigures = { rounds: [] }
    for (let round = 0; round < rounds; round += 1) {
      const { source, release } = snapshotSourceOf(state)
      try {
        const written = await timedWithStalls(() => store.snapshots.write(tenant, state.seq, Date.now(), source))
        measured.rounds.push({ writeMs: written.ms, longestStallMs: written.longestStallMs, longestBusyMs: written.longestBusyMs, bytes: written.result.bytes })
      } finally {
        release()
      }
    }
    return measured
  }),
)
console.log(`SNAPSHOT_WRITE ${JSON.stringify(figures)}`)
process.exit(0)
