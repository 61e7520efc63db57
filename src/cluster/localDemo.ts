/*
 * The local demo cluster (`npm run cluster:demo`, `timeledger demo-cluster`):
 * on this machine, one PostgreSQL (localPostgres.ts), three TimeLedger nodes
 * as child processes of this one, and HAProxy in front with the
 * configuration `timeledger haproxy-config` prints, all on loopback.
 * Everything lives under one directory (default ./cluster-demo): the
 * database, each node's DATA_DIR, the HAProxy configuration, and the API
 * key and cluster secret made on the first start, so a second start finds
 * the same tenants. The nodes and HAProxy log into files there.
 *
 * The point of the demo is to kill a node (its pid is printed) and keep
 * working through HAProxy: its tenants move to the others once their
 * leases run out. Enter (a line on the demo's standard input) starts every
 * node that ended again, and HAProxy if it ended, on the same ports and
 * data directories: the node joins, HAProxy's checks see it within a
 * second, and new tenants of its share of hosts land on it again (the
 * tenants the others took over stay there until they go to rest, and are
 * forwarded meanwhile). Ctrl-C stops the nodes (each snapshots its tenants
 * and gives its leases back), HAProxy and PostgreSQL.
 *
 * Each step that takes a while says so as it starts (PostgreSQL's first
 * initdb takes seconds), and the demo says when every node and HAProxy
 * answer.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import crypto from 'node:crypto'
import fs from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import readline from 'node:readline'
import { fileURLToPath } from 'node:url'
import { haproxyConfig } from './haproxyConfig.js'
import { assertPostgresCanEnter, localPostgres } from './localPostgres.js'

export interface DemoOptions {
  /** Where everything is kept. */
  readonly dir: string
  /** HAProxy's port; the nodes listen on the ports after it (node n: PORT base+n, ADMIN_PORT base+10+n, INTERNAL_PORT base+20+n). */
  readonly port: number
  readonly nodes: number
  readonly postgresPort: number
}

const CLI = fileURLToPath(new URL('../cli.js', import.meta.url))

/** A secret kept in the demo directory: made once, read at every later start. */
function keptSecret(file: string, bytes: number): string {
  if (!fs.existsSync(file)) fs.writeFileSync(file, `${crypto.randomBytes(bytes).toString('base64url')}\n`, { mode: 0o600 })
  return fs.readFileSync(file, 'utf8').trim()
}

function logTo(file: string): number {
  return fs.openSync(file, 'a', 0o600)
}

/** How long the demo waits for its nodes and HAProxy to answer after a start. */
const READY_TIMEOUT_MS = 60_000
const READY_POLL_MS = 200

/** A process of the demo (a node or HAProxy), started again by `start` after it ended. */
interface DemoProcess {
  readonly name: string
  /** The public port it answers GET /readyz on. */
  readonly port: number
  child: ChildProcess | null
  start(): ChildProcess
}

/** Whether GET /readyz on the port answers 200 (HTTP/1.1 with a Host, as the public listener wants). */
function answersReady(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const request = http.get({ host: '127.0.0.1', port, path: '/readyz', headers: { host: 'localhost' }, agent: false, timeout: 1000 }, (response) => {
      response.resume()
      resolve(response.statusCode === 200)
    })
    request.on('timeout', () => request.destroy())
    request.on('error', () => resolve(false))
  })
}

/** Waits until every process answers /readyz; answers the names of those that did not within READY_TIMEOUT_MS. */
async function untilReady(processes: readonly DemoProcess[]): Promise<string[]> {
  const deadline = Date.now() + READY_TIMEOUT_MS
  let waiting = [...processes]
  while (waiting.length > 0 && Date.now() < deadline) {
    const answers = await Promise.all(waiting.map((demoProcess) => answersReady(demoProcess.port)))
    waiting = waiting.filter((_, index) => answers[index] !== true)
    if (waiting.length > 0) await new Promise((resolve) => setTimeout(resolve, READY_POLL_MS))
  }
  return waiting.map(({ name }) => name)
}

export async function runDemo(options: DemoOptions): Promise<void> {
  const dir = path.resolve(options.dir)
  // The postgres user must pass through it to its own directories (localPostgres.ts); the secrets in it are 0600.
  fs.mkdirSync(dir, { recursive: true })
  fs.chmodSync(dir, 0o711)
  assertPostgresCanEnter(dir)
  const apiKey = keptSecret(path.join(dir, 'api-key'), 18)
  const secret = keptSecret(path.join(dir, 'cluster-secret'), 24)
  const pgData = path.join(dir, 'postgres')
  console.log(fs.existsSync(path.join(pgData, 'PG_VERSION')) ? `PostgreSQL: using ${pgData}` : `PostgreSQL: first start, making its database cluster in ${pgData} (initdb, a few seconds)`)
  const postgres = localPostgres(pgData, path.join(dir, 'postgres-run'), options.postgresPort)
  console.log(`PostgreSQL: starting on port ${options.postgresPort}`)
  postgres.start()
  const databaseUrl = postgres.url
  const processes: DemoProcess[] = []
  const nodePorts: number[] = []
  // HAProxy (on this machine) tells the nodes each client's address: the per-address limits count clients, not HAProxy.
  const env = { ...process.env, DATABASE_URL: databaseUrl, CLUSTER_SECRET: secret, API_KEYS: apiKey, BASE_DOMAIN: 'localhost', REQUEST_LOG: '0', TRUSTED_PROXIES: '127.0.0.1' }
  for (let index = 1; index <= options.nodes; index += 1) {
    const port = options.port + index
    const nodeDir = path.join(dir, `node${index}`)
    fs.mkdirSync(nodeDir, { recursive: true, mode: 0o700 })
    const nodeEnv = { ...env, NODE_ID: `node${index}`, PORT: String(port), ADMIN_PORT: String(options.port + 10 + index), INTERNAL_PORT: String(options.port + 20 + index), DATA_DIR: nodeDir }
    const logFile = path.join(dir, `node${index}.log`)
    processes.push({
      name: `node${index}`,
      port,
      child: null,
      start: () => {
        const log = logTo(logFile)
        const child = spawn(process.execPath, [CLI, 'serve'], { env: nodeEnv, stdio: ['ignore', log, log] })
        fs.closeSync(log)
        return child
      },
    })
    nodePorts.push(port)
  }
  const configFile = path.join(dir, 'haproxy.cfg')
  fs.writeFileSync(
    configFile,
    haproxyConfig({ nodes: nodePorts.map((port) => `127.0.0.1:${port}`), bind: `127.0.0.1:${options.port}`, publicHost: 'localhost', checkEveryMs: 500, stats: null, maxConnections: 4096 }),
  )
  processes.push({
    name: 'haproxy',
    port: options.port,
    child: null,
    start: () => {
      const log = logTo(path.join(dir, 'haproxy.log'))
      const child = spawn('haproxy', ['-db', '-f', configFile], { stdio: ['ignore', log, log] })
      fs.closeSync(log)
      return child
    },
  })

  let stopping = false
  const start = (demoProcess: DemoProcess) => {
    const child = demoProcess.start()
    demoProcess.child = child
    child.on('exit', (code, signal) => {
      if (!stopping) console.log(`${demoProcess.name} (pid ${child.pid}) ended: ${signal ?? `exit ${code}`}; press Enter here to start it again`)
    })
  }
  console.log(`starting ${options.nodes} nodes and HAProxy`)
  for (const demoProcess of processes) start(demoProcess)

  console.log(`TimeLedger demo cluster in ${dir}
  PostgreSQL   ${databaseUrl}
  HAProxy      http://127.0.0.1:${options.port}  (tenants at http://<tenant>.localhost:${options.port}/v1, or http://localhost:${options.port}/tenant/<tenant>/v1)
  API key      ${apiKey}
${processes.map(({ name, child, port }) => `  ${name.padEnd(12)} pid ${child?.pid}${name.startsWith('node') ? `, port ${port}` : ''}`).join('\n')}
  logs         ${dir}/*.log

Kill a node with kill -9 <pid> and keep working through HAProxy: its tenants move once their leases run out.
Press Enter here to start every node that ended again (same port, same data directory).
See the cluster: DATABASE_URL=${databaseUrl} CLUSTER_SECRET=$(cat ${dir}/cluster-secret) API_KEYS=${apiKey} node ${CLI} cluster
Ctrl-C stops everything.`)

  const sayWhenReady = async (started: readonly DemoProcess[]) => {
    const late = await untilReady(started)
    if (stopping) return
    if (late.length === 0) console.log(`ready: ${started.map(({ name }) => name).join(', ')} ${started.length === 1 ? 'answers' : 'answer'}`)
    else console.log(`not answering after ${READY_TIMEOUT_MS / 1000} s: ${late.join(', ')} (see ${dir}/*.log)`)
  }
  void sayWhenReady(processes)

  // A line on the standard input starts again every process that ended (the demo is run in a terminal).
  const restartEnded = () => {
    if (stopping) return
    const ended = processes.filter(({ child }) => child === null || child.exitCode !== null || child.signalCode !== null)
    if (ended.length === 0) {
      console.log('every node and HAProxy runs; nothing to start')
      return
    }
    for (const demoProcess of ended) {
      start(demoProcess)
      console.log(`${demoProcess.name} started again: pid ${demoProcess.child?.pid}, port ${demoProcess.port}`)
    }
    void sayWhenReady(ended)
  }
  // Not as a terminal: no raw mode, so Ctrl-C stays the signal that stops the demo.
  const input = readline.createInterface({ input: process.stdin, terminal: false })
  input.on('line', restartEnded)

  const stop = async () => {
    if (stopping) return
    stopping = true
    input.close()
    console.log('stopping the nodes, HAProxy and PostgreSQL')
    await Promise.all(
      processes.map(
        ({ child }) =>
          new Promise<void>((resolve) => {
            if (child === null || child.exitCode !== null || child.signalCode !== null) return resolve()
            child.once('exit', () => resolve())
            child.kill('SIGTERM')
          }),
      ),
    )
    postgres.stop()
    process.exit(0)
  }
  process.on('SIGINT', () => void stop())
  process.on('SIGTERM', () => void stop())
  await new Promise<never>(() => undefined)
}
