/*
 * Real clusters for tests (ARCHITECTURE.md §8, §10): a PostgreSQL started by
 * postgresServer.ts, TimeLedger nodes, and HAProxy running the
 * configuration `timeledger haproxy-config` prints, all on loopback.
 *
 * startCluster runs the nodes as child processes of the compiled CLI, so
 * a test can kill -9, SIGSTOP and SIGCONT them. startInProcessCluster runs
 * them in this process (quicker to start): the HTTP suites run against it
 * when TIMELEDGER_TEST_CLUSTER=1 (server.ts: startInProcess), each server
 * they start being a fresh database behind two nodes and HAProxy; one
 * PostgreSQL serves the whole test process. Both need Debian's postgresql
 * and haproxy (systemPrograms.ts: the test files ask before they start).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import postgres from 'postgres'
import { haproxyConfig } from '../../src/cluster/haproxyConfig.js'
import { loadConfig } from '../../src/config.js'
import { startService, type RunningService } from '../../src/service.js'
import { freePort } from './freePort.js'
import { TestClient } from './http.js'
import { startPostgres, type PostgresServer } from './postgresServer.js'
import { stopOnSignal } from './stopOnSignal.js'
import { assertInstalled, installedProgram } from './systemPrograms.js'
import { spawnServer, tempDataDir, testEnv, TEST_API_KEY, type ChildServer } from './server.js'

export const TEST_CLUSTER_SECRET = 'test-cluster-secret-0123456789'

/** The environment of a node of the test cluster: HAProxy, on 127.0.0.1, is its trusted proxy (it sends each client's address). */
export function clusterEnv(databaseUrl: string, nodeId: string, leaseMs: number, extra: Record<string, string> = {}): Record<string, string> {
  return { DATABASE_URL: databaseUrl, CLUSTER_SECRET: TEST_CLUSTER_SECRET, NODE_ID: nodeId, INTERNAL_PORT: '0', LEASE_MS: String(leaseMs), TRUSTED_PROXIES: '127.0.0.1', ...extra }
}

/** A fresh database on the server (every cluster of a test process gets its own). */
export async function freshDatabase(pg: PostgresServer, name: string): Promise<string> {
  const sql = postgres(pg.url, { max: 1, onnotice: () => undefined })
  try {
    await sql.unsafe(`CREATE DATABASE "${name}"`)
  } finally {
    await sql.end()
  }
  const url = new URL(pg.url)
  url.pathname = `/${name}`
  return url.toString()
}

export interface Haproxy {
  readonly child: ChildProcess
  readonly port: number
  readonly configFile: string
  stop(): Promise<void>
}

/** Starts HAProxy in the foreground in front of the nodes' public ports; resolves once it listens. */
export async function startHaproxy(nodePorts: readonly number[], checkEveryMs = 500): Promise<Haproxy> {
  const port = await freePort()
  const dir = tempDataDir('haproxy')
  const configFile = path.join(dir, 'haproxy.cfg')
  fs.writeFileSync(
    configFile,
    haproxyConfig({ nodes: nodePorts.map((nodePort) => `127.0.0.1:${nodePort}`), bind: `127.0.0.1:${port}`, publicHost: 'localhost', checkEveryMs, stats: null, maxConnections: 1000 }),
  )
  const child = spawn(installedProgram('haproxy'), ['-db', '-f', configFile], { stdio: ['ignore', 'pipe', 'pipe'] })
  const forgetOnSignal = stopOnSignal(() => child.kill('SIGKILL'))
  child.once('exit', forgetOnSignal)
  let output = ''
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()))
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()))
  const deadline = Date.now() + 10_000
  while (!(await accepts(port))) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`haproxy did not start:\n${output}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return {
    child,
    port,
    configFile,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve()
        child.once('exit', () => resolve())
        child.kill('SIGKILL')
      }),
  }
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1')
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
}

/** Waits until HAProxy answers a public call through a node that is up (its checks have passed). */
export async function untilServed(client: TestClient, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const answer = await client.request('GET', '/readyz').catch(() => null)
    if (answer !== null && answer.status === 200) return
    if (Date.now() > deadline) throw new Error(`the cluster did not serve within ${timeoutMs} ms (last: ${answer?.status ?? 'no answer'})`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

export interface ChildNode extends ChildServer {
  readonly nodeId: string
  readonly dataDir: string
}

/** The tenant's lease row as the database holds it: owner (an incarnation id) and epoch; undefined before any claim. */
export async function leaseRowOf(databaseUrl: string, tenant: string): Promise<{ owner: string; epoch: number } | undefined> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => undefined })
  try {
    const rows = await sql<{ owner: string; epoch: string }[]>`SELECT owner, epoch FROM leases WHERE tenant = ${tenant}`
    return rows[0] === undefined ? undefined : { owner: rows[0].owner, epoch: Number(rows[0].epoch) }
  } finally {
    await sql.end()
  }
}

/**
 * The ids of every project of the tenant, read page by page (a page holds at most 1000: a list larger than that is
 * never answered whole); the status and text of a page refused instead.
 */
export async function allProjectIds(client: TestClient, tenant: string, token: string, timeoutMs = 30_000): Promise<{ ids: Set<string> } | { status: number; text: string }> {
  const ids = new Set<string>()
  const pageSize = 1000
  for (let skip = 0; ; skip += pageSize) {
    const page = await client.request('GET', '/v1/time/projects', { tenant, query: { token, $orderby: 'id', $top: pageSize, $skip: skip }, timeoutMs })
    if (page.status !== 200) return { status: page.status, text: page.text }
    const projects = page.json as { id: string }[]
    for (const project of projects) ids.add(project.id)
    if (projects.length < pageSize) return { ids }
  }
}

/** The node of a lease owner: owners are incarnations, NODE_ID and a part new at every start (clusterNode.ts). */
export function nodeOfOwner<N extends { nodeId: string }>(nodes: readonly N[], owner: string | undefined): N | undefined {
  if (owner === undefined) return undefined
  const nodeId = owner.slice(0, owner.lastIndexOf('.'))
  return nodes.find((node) => node.nodeId === nodeId)
}

export interface TestCluster {
  readonly pg: PostgresServer
  readonly databaseUrl: string
  readonly nodes: ChildNode[]
  readonly haproxy: Haproxy
  /** A client through HAProxy. */
  readonly client: TestClient
  readonly leaseMs: number
  stop(): Promise<void>
}

export interface ClusterOptions {
  readonly nodes?: number
  readonly leaseMs?: number
  readonly pg?: PostgresServer
  readonly env?: Record<string, string>
}

export async function spawnNode(databaseUrl: string, nodeId: string, leaseMs: number, env: Record<string, string> = {}): Promise<ChildNode> {
  const dataDir = tempDataDir(`node-${nodeId}`)
  const server = await spawnServer(dataDir, { ...clusterEnv(databaseUrl, nodeId, leaseMs, env), PORT: '0' })
  return { ...server, nodeId, dataDir }
}

/** PostgreSQL (unless given), `nodes` child-process nodes and HAProxy in front. */
export async function startCluster(options: ClusterOptions = {}): Promise<TestCluster> {
  assertInstalled(['postgresql', 'haproxy'])
  const leaseMs = options.leaseMs ?? 1_500
  const pg = options.pg ?? (await startPostgres())
  const nodes: ChildNode[] = []
  let haproxy: Haproxy | null = null
  const stop = async () => {
    await haproxy?.stop()
    for (const node of nodes) if (node.child.exitCode === null && node.child.signalCode === null) node.child.kill('SIGKILL')
    if (options.pg === undefined) pg.stop()
  }
  try {
    const databaseUrl = await freshDatabase(pg, `cluster_${process.pid}_${Date.now()}`)
    for (let index = 0; index < (options.nodes ?? 2); index += 1) nodes.push(await spawnNode(databaseUrl, `node${index + 1}`, leaseMs, options.env))
    haproxy = await startHaproxy(nodes.map((node) => node.port))
    const client = new TestClient(haproxy.port, TEST_API_KEY)
    await untilServed(client)
    return {
      pg,
      databaseUrl,
      nodes,
      haproxy,
      client,
      leaseMs,
      stop,
    }
  } catch (error) {
    // Nothing started may outlive a cluster that did not start (the test process would never end).
    await stop()
    throw error
  }
}

/** One PostgreSQL for the in-process clusters of this test process, stopped when it exits. */
let sharedPg: Promise<PostgresServer> | null = null

function processPostgres(): Promise<PostgresServer> {
  sharedPg ??= startPostgres().then((pg) => {
    process.once('exit', () => pg.stop())
    return pg
  })
  return sharedPg
}

/** The lease of a test cluster's nodes: short, so a node that died is replaced soon. */
const TEST_LEASE_MS = 1_500

/** The database of each data directory a test used, so a server restarted on it finds its data again. */
const databaseOfDataDir = new Map<string, string>()

export interface InProcessCluster {
  readonly services: RunningService[]
  readonly client: TestClient
  stop(): Promise<void>
}

/** Two in-process nodes on a database of their own (the one of `dataDir` when it had one) behind HAProxy. */
export async function startInProcessCluster(dataDir: string, extra: Record<string, string> = {}): Promise<InProcessCluster> {
  // The HTTP suites run through it with TIMELEDGER_TEST_CLUSTER=1: without the programs, one line says why they fail.
  assertInstalled(['postgresql', 'haproxy'])
  const pg = await processPostgres()
  let databaseUrl = databaseOfDataDir.get(dataDir)
  if (databaseUrl === undefined) {
    databaseUrl = await freshDatabase(pg, `t_${process.pid}_${databaseOfDataDir.size}`)
    databaseOfDataDir.set(dataDir, databaseUrl)
  } else {
    // A restart: a lease the stopped nodes did not give back in time (a clean stop under load) holds its tenant until
    // it runs out, and until then a request for it is answered 503 "try again" (TenantMoved), as a client of a
    // restarted cluster sees too. A test restarts and asserts at once, so it waits those leases out first.
    await new Promise((resolve) => setTimeout(resolve, TEST_LEASE_MS + 250))
  }
  // One DATA_DIR for both (a cluster node holds no lock on it): the mails of either land in its outbox, as tests expect.
  const services: RunningService[] = []
  for (const nodeId of ['node1', 'node2']) services.push(await startService(loadConfig(testEnv(dataDir, { ...clusterEnv(databaseUrl, nodeId, TEST_LEASE_MS), ...extra }))))
  const haproxy = await startHaproxy(services.map((service) => service.port))
  const client = new TestClient(haproxy.port, TEST_API_KEY)
  await untilServed(client)
  return {
    services,
    client,
    async stop() {
      await haproxy.stop()
      for (const service of services) await service.stop()
    },
  }
}
