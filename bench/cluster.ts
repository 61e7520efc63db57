/*
 * The figures of cluster mode (issue 28), beside the embedded mode measured
 * in the same minutes on the same machine (bench/README.md, "Cluster mode"):
 *
 *   post        durable POST of a time record over TENANTS small tenants:
 *               embedded server | one cluster node, direct | two nodes
 *               through HAProxy (clusterThroughput.ts)
 *   get         GET one project from memory: embedded | node direct |
 *               through HAProxy | the holding node direct | the other node
 *               direct, which forwards (clusterThroughput.ts)
 *   failover    SIGKILL of the node holding the 100,000-record tenant under
 *               writes through HAProxy, default LEASE_MS: kill to the first
 *               acknowledged write, in rounds (clusterFailover.ts)
 *   activation  first request of the 100,000- and 1,000,000-record tenants
 *               on a fresh node vs on the embedded server, and the node's
 *               prepare/recover split (clusterActivation.ts)
 *   commits     PostgreSQL's own ceiling for small durable commits
 *               (pgbench, pgCommitCeiling.ts)
 *
 * Each load reports requests/s, p50/p99 and CPU per request of the servers,
 * PostgreSQL and HAProxy (clusterLoad.ts). PostgreSQL is started here
 * (initdb/pg_ctl in a temporary directory, fsync and synchronous_commit on)
 * and each configuration gets a fresh database. Its start-up logic is
 * test/helpers/postgresServer.ts's and HAProxy's test/helpers/cluster.ts's,
 * imported until they move under src/cluster/. The run is written as JSON
 * to bench/results/cluster-<time>.json.
 *
 *   node dist/bench/cluster.js [--figure post,get,failover,activation,commits]
 *        [--duration 10] [--connections 50] [--rounds 3]
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { freshDatabase } from '../test/helpers/cluster.js'
import { startPostgres } from '../test/helpers/postgresServer.js'
import { scriptArgs } from './cliOptions.js'
import { activation, type ActivationFigures } from './clusterActivation.js'
import { failover } from './clusterFailover.js'
import { clusterLog as log } from './clusterLoad.js'
import { throughput } from './clusterThroughput.js'
import { measureCommitCeiling, postmasterPid, type CommitCeilingFigure } from './pgCommitCeiling.js'

const FIGURES = ['post', 'get', 'failover', 'activation', 'commits']
/** The tenants whose activation is measured: the failover's and the big one. */
const ACTIVATION_RECORDS = [100_000, 1_000_000]
const RESULTS_DIR = fileURLToPath(new URL('../../bench/results/', import.meta.url))

const args = scriptArgs({
  usage: 'npm run bench:cluster -- [options]     (or: node dist/bench/cluster.js [options])',
  about:
    'Cluster mode beside the embedded mode: its own PostgreSQL, nodes and HAProxy; writes bench/results/cluster-<time>.json\n' +
    '(see bench/README.md, "Cluster mode"). Needs wrk, haproxy and PostgreSQL (Debian packages).',
  options: {
    figure: { value: 'a,b', help: `which figures (default: all): ${FIGURES.join(', ')}` },
    duration: { value: 's', help: 'measured seconds per load (default 10)' },
    connections: { value: 'n', help: 'connections per load (default 50)' },
    rounds: { value: 'n', help: 'failover rounds (default 3)' },
  },
})
const figures = (args.text('figure') ?? FIGURES.join(',')).split(',').filter((name) => name !== '')
for (const name of figures) if (!FIGURES.includes(name)) args.refuse(`unknown figure '${name}'; figures: ${FIGURES.join(', ')}`)
const durationSeconds = args.positiveInteger('duration', 10)
const connections = args.positiveInteger('connections', 50)
const rounds = args.positiveInteger('rounds', 3)

const report: Record<string, unknown> = {
  startedAt: new Date().toISOString(),
  machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model ?? '?', memoryBytes: os.totalmem(), loadAverage: os.loadavg() },
  options: { figures, durationSeconds, connections, rounds, tool: 'wrk' },
}
log(`PostgreSQL: initdb and start …`)
const pg = await startPostgres()
try {
  const postmaster = postmasterPid(pg.dataDir)
  if (figures.includes('post') || figures.includes('get'))
    report.throughput = await throughput(pg, postmaster, { post: figures.includes('post'), get: figures.includes('get') }, { durationSeconds, connections })
  if (figures.includes('failover')) report.failover = await failover(pg, rounds)
  if (figures.includes('activation')) {
    const activations: ActivationFigures[] = []
    for (const records of ACTIVATION_RECORDS) activations.push(await activation(pg, records))
    for (const figure of activations)
      log(`activation of ${figure.records} records: cluster ${figure.cluster.activationMs.toFixed(0)} ms / embedded ${figure.embedded.activationMs.toFixed(0)} ms = ${figure.ratio.toFixed(2)}×`)
    report.activation = activations
  }
  if (figures.includes('commits')) {
    log('PostgreSQL commit ceiling (pgbench) …')
    const ceiling: CommitCeilingFigure[] = await measureCommitCeiling(await freshDatabase(pg, `bench_commits_${Date.now()}`), postmaster, durationSeconds)
    for (const figure of ceiling)
      log(
        `pgbench ${figure.rowsPerCommit} row(s)/commit, ${figure.connections} conns: ${figure.commitsPerSecond.toFixed(0)} commits/s, ${figure.rowsPerSecond.toFixed(0)} rows/s, ${figure.averageLatencyMs.toFixed(2)} ms avg, PostgreSQL CPU ${figure.pgCpuMicrosPerCommit?.toFixed(0) ?? '?'} µs/commit`,
      )
    report.commits = ceiling
  }
} finally {
  pg.stop()
}
report.finishedAt = new Date().toISOString()
fs.mkdirSync(RESULTS_DIR, { recursive: true })
const file = path.join(RESULTS_DIR, `cluster-${String(report.startedAt).replace(/[:.]/g, '-')}.json`)
fs.writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`)
log(`written ${file}`)
process.exit(0)
