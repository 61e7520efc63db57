/*
 * The activation figure of the cluster benchmark (cluster.ts) for one
 * fixture size: the embedded server on a copy of the fixture answers its
 * first request (a login, which activates the tenant from its snapshot
 * file) and a second one; the tenant is exported and imported into a fresh
 * cluster database (tenantTransfer.ts), and a fresh node answers the same
 * two requests (its first activates the tenant from PostgreSQL). Each
 * activation is the first request's time minus the second's (Argon2id and a
 * token write). activationPhases.ts, run as a child process on the same
 * database, splits the node's activation into prepare and recover.
 */
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { freshDatabase } from '../test/helpers/cluster.js'
import type { PostgresServer } from '../test/helpers/postgresServer.js'
import type { ActivationPhases } from './activationPhases.js'
import { clusterLog } from './clusterLoad.js'
import { startClusterNode } from './clusterNodes.js'
import { copyFixture, readFixtureInfo } from './fixture.js'
import { ensureFixture } from './generate.js'
import { BenchClient } from './httpClient.js'
import { ownerLogin } from './scenarios.js'
import { NO_AUTO_SNAPSHOTS, startServer } from './serverProcess.js'
import { exportFixtureTenant, importIntoCluster } from './tenantTransfer.js'

export interface ActivationFigures {
  records: number
  exportBytes: number
  exportMs: number
  importMs: number
  embedded: { firstMs: number; secondMs: number; activationMs: number }
  cluster: { firstMs: number; secondMs: number; activationMs: number }
  /** The cluster activation's two phases, in a process of their own (activationPhases.ts). */
  phases: ActivationPhases
  ratio: number
}

async function activationPhases(databaseUrl: string, tenant: string): Promise<ActivationPhases> {
  const script = fileURLToPath(new URL('./activationPhases.js', import.meta.url))
  const { stdout } = await promisify(execFile)(process.execPath, [script, '--database-url', databaseUrl, '--tenant', tenant], { maxBuffer: 16 * 1024 * 1024, timeout: 10 * 60_000 })
  const line = stdout.split('\n').find((text) => text.startsWith('ACTIVATION_PHASES '))
  if (line === undefined) throw new Error(`activationPhases printed no figures:\n${stdout}`)
  return JSON.parse(line.slice('ACTIVATION_PHASES '.length)) as ActivationPhases
}

async function twoLogins(port: number, records: number): Promise<{ firstMs: number; secondMs: number; activationMs: number }> {
  const fixture = readFixtureInfo(records)
  if (fixture === null) throw new Error(`no fixture with ${records} records`)
  const client = new BenchClient(port)
  try {
    const first = await ownerLogin(client, fixture)
    const second = await ownerLogin(client, fixture)
    return { firstMs: first.ms, secondMs: second.ms, activationMs: first.ms - second.ms }
  } finally {
    client.close()
  }
}

export async function activation(pg: PostgresServer, records: number): Promise<ActivationFigures> {
  const fixture = await ensureFixture(records)
  clusterLog(`activation: the embedded server's first request on a copy of the ${records}-record fixture …`)
  const dataDir = copyFixture(records, 'activation')
  let embedded: ActivationFigures['embedded']
  try {
    const server = await startServer({ dataDir, env: NO_AUTO_SNAPSHOTS })
    try {
      embedded = await twoLogins(server.port, records)
    } finally {
      // SIGKILL: a clean stop would snapshot the tenant, which is no part of the figure.
      process.kill(server.pid, 'SIGKILL')
      await server.stop()
    }
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
  clusterLog(`embedded: first login ${embedded.firstMs.toFixed(0)} ms, second ${embedded.secondMs.toFixed(0)} ms`)
  const exported = await exportFixtureTenant(records, fixture.tenant)
  const databaseUrl = await freshDatabase(pg, `bench_activation_${Date.now()}`)
  let importMs: number
  try {
    importMs = await importIntoCluster(exported.file, databaseUrl)
  } finally {
    exported.remove()
  }
  clusterLog(`exported in ${exported.exportMs.toFixed(0)} ms (${exported.bytes} bytes), imported into PostgreSQL in ${importMs.toFixed(0)} ms`)
  const node = await startClusterNode(databaseUrl, 'node1')
  let cluster: ActivationFigures['cluster']
  try {
    cluster = await twoLogins(node.server.port, records)
  } finally {
    node.kill()
    await node.stop()
  }
  clusterLog(`cluster node: first login ${cluster.firstMs.toFixed(0)} ms, second ${cluster.secondMs.toFixed(0)} ms`)
  const phases = await activationPhases(databaseUrl, fixture.tenant)
  clusterLog(`cluster activation phases: prepare (PostgreSQL reads) ${phases.prepareMs.toFixed(0)} ms, recover (decode, indexes, replay) ${phases.recoverMs.toFixed(0)} ms`)
  return { records, exportBytes: exported.bytes, exportMs: exported.exportMs, importMs, embedded, cluster, phases, ratio: cluster.activationMs / embedded.activationMs }
}
