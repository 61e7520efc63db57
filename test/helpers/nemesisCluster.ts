/*
 * The cluster the randomized fault test breaks (test/cluster/nemesis.test.ts):
 * PostgreSQL with a synchronous standby (replicatedPostgres.ts), TimeLedger
 * nodes as child processes of the compiled CLI, and HAProxy with the
 * configuration `timeledger haproxy-config` prints (cluster.ts), all on
 * loopback. What it adds to cluster.ts is what a fault needs:
 *
 *   * each node reaches PostgreSQL through a TCP proxy of its own
 *     (tcpProxy.ts; its DATABASE_URL names the proxy), so the test can cut
 *     one node off the database while the others keep it, and re-point
 *     every node at a promoted standby;
 *   * each node keeps its public port across restarts (HAProxy's
 *     configuration names the ports), so a node killed with SIGKILL comes
 *     back where HAProxy looks for it, under the same NODE_ID (a new
 *     incarnation: clusterNode.ts) and DATA_DIR;
 *   * kill (SIGKILL), pause (SIGSTOP) and resume (SIGCONT) of a node, and
 *     failover(): the primary killed, the standby promoted, the proxies
 *     re-pointed at it, then a new synchronous standby made.
 *
 * The nodes' URLs carry target_session_attrs=read-write as the README asks,
 * so a node never keeps a connection to a server still in recovery.
 */
import { clusterEnv, startHaproxy, untilServed, type Haproxy } from './cluster.js'
import { freePort } from './freePort.js'
import { TestClient } from './http.js'
import { startReplicatedPostgres, type ReplicatedPostgres } from './replicatedPostgres.js'
import { spawnServer, tempDataDir, TEST_API_KEY, type ChildServer } from './server.js'
import { startTcpProxy, type TcpProxy } from './tcpProxy.js'

/** How much of a node's output is kept (the tail, over all its incarnations). */
const OUTPUT_KEPT_CHARS = 200_000

type NodeState = 'up' | 'killed' | 'paused'

export interface FaultyNode {
  readonly name: string
  /** The public port, the same across restarts. */
  readonly port: number
  /** Between this node and PostgreSQL. */
  readonly proxy: TcpProxy
  /** Straight at this node's public port. */
  readonly client: TestClient
  readonly state: NodeState
  /** SIGKILL; resolves once the process is gone. */
  kill(): Promise<void>
  /** Starts the node again (after kill()); resolves once it listens. */
  restart(): Promise<void>
  /** SIGSTOP. */
  pause(): void
  /** SIGCONT. */
  resume(): void
  /** The tail of everything the node's incarnations wrote. */
  output(): string
}

export interface NemesisCluster {
  readonly pg: ReplicatedPostgres
  readonly nodes: readonly FaultyNode[]
  readonly haproxy: Haproxy
  /** A client through HAProxy. */
  readonly client: TestClient
  readonly leaseMs: number
  /**
   * Fails PostgreSQL over to its standby and re-points the nodes' proxies; then makes a new synchronous standby.
   * Answers how long the first part took (ms): from the primary's kill to the proxies' re-pointing.
   */
  failover(): Promise<number>
  stop(): Promise<void>
}

export interface NemesisClusterOptions {
  readonly nodes: number
  readonly leaseMs: number
  /** More settings for every node. */
  readonly env?: Record<string, string>
}

function gone(child: ChildServer['child']): boolean {
  return child.exitCode !== null || child.signalCode !== null
}

async function startNode(name: string, databaseName: string, proxy: TcpProxy, leaseMs: number, env: Record<string, string>): Promise<FaultyNode> {
  const port = await freePort()
  const dataDir = tempDataDir(`nemesis-${name}`)
  const databaseUrl = `postgres://postgres@127.0.0.1:${proxy.port}/${databaseName}?target_session_attrs=read-write`
  /** The tail of the output of the incarnations before the current one. */
  let earlier = ''
  let server: ChildServer | null = null
  let state: NodeState = 'up'
  const output = () => `${earlier}${server?.output() ?? ''}`.slice(-OUTPUT_KEPT_CHARS)
  const spawn = async () => {
    server = await spawnServer(dataDir, { ...clusterEnv(databaseUrl, name, leaseMs, env), PORT: String(port) })
  }
  await spawn()
  const node: FaultyNode = {
    name,
    port,
    proxy,
    client: new TestClient(port, TEST_API_KEY),
    get state() {
      return state
    },
    async kill() {
      const child = server?.child
      if (child === undefined || gone(child)) return
      await new Promise<void>((resolve) => {
        child.once('exit', () => resolve())
        child.kill('SIGKILL')
      })
      earlier = output()
      server = null
      state = 'killed'
    },
    async restart() {
      if (state !== 'killed') throw new Error(`${name}: restart() after kill() only (it is ${state})`)
      await spawn()
      state = 'up'
    },
    pause() {
      if (state !== 'up' || server === null) throw new Error(`${name}: pause() of a node that is ${state}`)
      server.child.kill('SIGSTOP')
      state = 'paused'
    },
    resume() {
      if (state !== 'paused' || server === null) throw new Error(`${name}: resume() of a node that is ${state}`)
      server.child.kill('SIGCONT')
      state = 'up'
    },
    output,
  }
  return node
}

export async function startNemesisCluster(options: NemesisClusterOptions): Promise<NemesisCluster> {
  const pg = await startReplicatedPostgres()
  const proxies: TcpProxy[] = []
  const nodes: FaultyNode[] = []
  let haproxy: Haproxy | null = null
  const stop = async () => {
    await haproxy?.stop()
    // SIGKILL ends a stopped process too.
    for (const node of nodes) await node.kill()
    for (const proxy of proxies) await proxy.close()
    pg.stop()
  }
  try {
    const databaseName = await pg.createDatabase(`nemesis_${process.pid}_${Date.now()}`)
    for (let index = 1; index <= options.nodes; index += 1) {
      const proxy = await startTcpProxy(pg.primary.port)
      proxies.push(proxy)
      nodes.push(await startNode(`node${index}`, databaseName, proxy, options.leaseMs, options.env ?? {}))
    }
    haproxy = await startHaproxy(nodes.map((node) => node.port))
    const client = new TestClient(haproxy.port, TEST_API_KEY)
    await untilServed(client)
    const running = haproxy
    return {
      pg,
      nodes,
      haproxy: running,
      client,
      leaseMs: options.leaseMs,
      async failover() {
        const startedMs = performance.now()
        const promoted = await pg.failover()
        for (const proxy of proxies) proxy.retarget(promoted.port)
        const promotedMs = Math.round(performance.now() - startedMs)
        await pg.addStandby()
        return promotedMs
      },
      stop,
    }
  } catch (error) {
    await stop()
    throw error
  }
}
