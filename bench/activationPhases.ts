/*
 * Where a cluster node's activation of a tenant spends its time, measured
 * in a process of its own (a fresh heap, like a node that just started):
 * the cluster store is opened as the operator tools open it
 * (withClusterStore), then the two phases of an activation are timed
 * apart — `prepare` (PostgreSQL: the snapshot listing and log runs, the
 * snapshot's parts, the log after it; PgStorage.prepare) and `recover`
 * (the same synchronous recovery as the embedded mode's: decode the
 * snapshot, build the indexes, replay the log after it). Nothing is
 * claimed: reads only. Prints one line `ACTIVATION_PHASES {json}`.
 *
 *   node dist/bench/activationPhases.js --database-url postgres://… --tenant bench
 */
import { loadConfig } from '../src/config.js'
import { withClusterStore } from '../src/cluster/clusterTools.js'
import { TenantActor } from '../src/tenants/tenantActor.js'
import { scriptArgs } from './cliOptions.js'
import { clusterSettings } from './clusterNodes.js'
import { NO_AUTO_SNAPSHOTS } from './serverProcess.js'

export interface ActivationPhases {
  prepareMs: number
  recoverMs: number
  heapUsedBytes: number
}

const args = scriptArgs({
  usage: 'node dist/bench/activationPhases.js --database-url <url> --tenant <name>',
  about:
    "A cluster node's activation of one tenant split in two: prepare (reading the tenant's snapshot and log from\nPostgreSQL) and recover (decode, indexes, replay); prints ACTIVATION_PHASES {json}.",
  options: { 'database-url': { value: '<url>', help: 'the cluster database (required)' }, tenant: { value: '<name>', help: 'the tenant to activate (required)' } },
  startedBy: 'cluster.js (the activation figure)',
})
const databaseUrl = args.text('database-url') ?? args.refuse('--database-url is required')
const tenant = args.text('tenant') ?? args.refuse('--tenant is required')
const config = loadConfig({ ...NO_AUTO_SNAPSHOTS, ...clusterSettings(databaseUrl, 'bench-phases', null), DATA_DIR: '/nonexistent', API_KEYS: 'unused', QUIET: '1' })
if (config.cluster === null) throw new Error('not a cluster configuration')
const phases = await withClusterStore(config.cluster, async (store) => {
  const started = performance.now()
  await store.prepare(tenant)
  const prepared = performance.now()
  const actor = TenantActor.recover(tenant, config, store)
  const recovered = performance.now()
  const figures: ActivationPhases = { prepareMs: prepared - started, recoverMs: recovered - prepared, heapUsedBytes: process.memoryUsage().heapUsed }
  if (actor.state.seq < 1) throw new Error(`${tenant}: nothing recovered`)
  return figures
})
console.log(`ACTIVATION_PHASES ${JSON.stringify(phases)}`)
process.exit(0)
