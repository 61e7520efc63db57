/*
 * The post and get figures of the cluster benchmark (cluster.ts), three
 * configurations one after the other, each on fresh data: the embedded
 * server; one cluster node, loaded on its own port; two nodes behind
 * HAProxy. In each, TENANTS small tenants are signed up over HTTP
 * (mixedLoad.ts); the POST load is a wrk deck of one time record creation
 * per tenant, the GET load one project of the first tenant. With two nodes
 * the tenants are first settled where HAProxy sends them (clusterPair.ts),
 * and the GET runs through HAProxy, straight to the holding node, and
 * straight to the other node, which forwards every request.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { freshDatabase, nodeOfOwner } from '../test/helpers/cluster.js'
import type { PostgresServer } from '../test/helpers/postgresServer.js'
import { clusterLog, describe, idleCpu, measured, single, type LoadFigure, type Measured } from './clusterLoad.js'
import { BENCH_ADMIN_KEY, leaseOf, metricsReader, startClusterNode } from './clusterNodes.js'
import { startTwoNodes } from './clusterPair.js'
import { BenchClient, hostOf, withQuery } from './httpClient.js'
import { freePort, runLoad, type LoadResult } from './loadgen.js'
import { createSmallTenants, runDeck, type PreparedRequest, type SmallTenant } from './mixedLoad.js'
import { timeRecordBody } from './scenarios.js'
import { NO_AUTO_SNAPSHOTS, startServer, type BenchServer } from './serverProcess.js'

/** Small tenants the POST deck spreads over (so that two nodes both get some). */
const TENANTS = 8

export interface LoadOptions {
  durationSeconds: number
  connections: number
}

interface Target {
  /** The port the load goes to. */
  port: number
  processes: Record<string, Measured[]>
  /** The /metrics of the server(s) behind the port. */
  nodes: readonly { metrics(): Promise<string> }[]
}

function postDeck(tenants: readonly SmallTenant[], port: number): PreparedRequest[] {
  return tenants.map(({ tenant, token, projectIds }, index) => ({
    method: 'POST',
    host: hostOf(tenant, port),
    path: withQuery('/v1/time/timerecords', { token }),
    body: timeRecordBody(projectIds[0] as string, index),
  }))
}

function getProject(tenant: SmallTenant, port: number, connections: number): (seconds: number) => Promise<LoadResult> {
  const path = withQuery(`/v1/time/projects/${tenant.projectIds[0] as string}`, { token: tenant.token })
  return (seconds) => runLoad({ url: `http://127.0.0.1:${port}${path}`, method: 'GET', headers: { Host: hostOf(tenant.tenant, port) }, connections, durationSeconds: seconds, pipelining: 1 })
}

async function signUp(port: number): Promise<SmallTenant[]> {
  const client = new BenchClient(port)
  try {
    return await createSmallTenants(client, TENANTS)
  } finally {
    client.close()
  }
}

export interface ThroughputFigures {
  post: Record<string, LoadFigure>
  get: Record<string, LoadFigure>
  /** Where the small tenants lived in the two-node cluster: node id → tenants. */
  placement: Record<string, number>
  /** CPU µs per second of each configuration's processes with no load. */
  idle: Record<string, Record<string, number | null>>
}

export async function throughput(pg: PostgresServer, postmaster: number, wanted: { post: boolean; get: boolean }, { durationSeconds, connections }: LoadOptions): Promise<ThroughputFigures> {
  const out: ThroughputFigures = { post: {}, get: {}, placement: {}, idle: {} }
  const pgMeasured: Measured[] = [{ pid: postmaster, tree: true }]
  const run = async (name: string, target: Target, tenants: SmallTenant[], getTargets: { name: string; port: number; processes: Record<string, Measured[]> }[]) => {
    out.idle[name] = await idleCpu(target.processes)
    clusterLog(
      `idle ${name}: ${Object.entries(out.idle[name] ?? {})
        .map(([process, micros]) => `${process} ${micros === null ? '?' : (micros / 1000).toFixed(1)} ms/s`)
        .join(', ')}`,
    )
    if (wanted.post) {
      const figure = await measured((seconds) => runDeck('wrk', target.port, postDeck(tenants, target.port), connections, seconds), durationSeconds, target.processes, target.nodes)
      describe(`post ${name}`, figure)
      out.post[name] = figure
    }
    if (wanted.get) {
      for (const get of getTargets) {
        const figure = await measured(getProject(tenants[0] as SmallTenant, get.port, connections), durationSeconds, get.processes, target.nodes)
        describe(`get ${get.name}`, figure)
        out.get[get.name] = figure
      }
    }
  }

  clusterLog('embedded server …')
  const embeddedDir = fs.mkdtempSync(path.join(os.tmpdir(), 'timeledger-bench-embedded-'))
  const adminPort = await freePort()
  const embedded: BenchServer = await startServer({ dataDir: embeddedDir, env: { ...NO_AUTO_SNAPSHOTS, ADMIN_PORT: String(adminPort), ADMIN_KEY: BENCH_ADMIN_KEY } })
  try {
    const processes = { server: single(embedded.pid) }
    await run('embedded', { port: embedded.port, processes, nodes: [{ metrics: metricsReader(adminPort) }] }, await signUp(embedded.port), [{ name: 'embedded', port: embedded.port, processes }])
  } finally {
    await embedded.stop()
    fs.rmSync(embeddedDir, { recursive: true, force: true })
  }

  clusterLog('one cluster node, direct …')
  const oneNode = await startClusterNode(await freshDatabase(pg, `bench_one_${Date.now()}`), 'node1')
  try {
    const processes = { node: single(oneNode.server.pid), postgres: pgMeasured }
    await run('node direct', { port: oneNode.server.port, processes, nodes: [oneNode] }, await signUp(oneNode.server.port), [{ name: 'node direct', port: oneNode.server.port, processes }])
  } finally {
    await oneNode.stop()
  }

  clusterLog('two cluster nodes behind HAProxy …')
  const two = await startTwoNodes(await freshDatabase(pg, `bench_two_${Date.now()}`))
  try {
    const tenants = await signUp(two.haproxy.port)
    const haproxyPid: Measured[] = [{ pid: two.haproxy.child.pid as number, tree: true }]
    const nodesMeasured = two.nodes.flatMap((node) => single(node.server.pid))
    const lease = await leaseOf(two.databaseUrl, (tenants[0] as SmallTenant).tenant)
    const owner = nodeOfOwner(two.nodes, lease?.owner)
    const other = two.nodes.find((node) => node !== owner)
    if (owner === undefined || other === undefined) throw new Error(`no owner for ${tenants[0]?.tenant}: ${lease?.owner}`)
    const getTargets: { name: string; port: number; processes: Record<string, Measured[]> }[] = [
      { name: 'HAProxy → owner', port: two.haproxy.port, processes: { nodes: nodesMeasured, haproxy: haproxyPid } },
      { name: 'owner direct (2 nodes)', port: owner.server.port, processes: { nodes: nodesMeasured } },
      { name: 'other node direct (forwards)', port: other.server.port, processes: { nodes: nodesMeasured } },
    ]
    await run('2 nodes via HAProxy', { port: two.haproxy.port, processes: { nodes: nodesMeasured, postgres: pgMeasured, haproxy: haproxyPid }, nodes: two.nodes }, tenants, getTargets)
    for (const tenant of tenants) {
      const nodeId = nodeOfOwner(two.nodes, (await leaseOf(two.databaseUrl, tenant.tenant))?.owner)?.nodeId ?? 'none'
      out.placement[nodeId] = (out.placement[nodeId] ?? 0) + 1
    }
    clusterLog(`tenants per node: ${JSON.stringify(out.placement)}`)
  } finally {
    await two.stop()
  }
  return out
}
