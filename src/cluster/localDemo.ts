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
 * leases run out. A killed node is not restarted (start it again with the
 * printed command, or restart the demo). Ctrl-C stops the nodes (each
 * snapshots its tenants and gives its leases back), HAProxy and
 * PostgreSQL.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { haproxyConfig } from './haproxyConfig.js'
import { localPostgres } from './localPostgres.js'

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

export async function runDemo(options: DemoOptions): Promise<void> {
  const dir = path.resolve(options.dir)
  // The postgres user must pass through it to its own directories (localPostgres.ts); the secrets in it are 0600.
  fs.mkdirSync(dir, { recursive: true })
  fs.chmodSync(dir, 0o711)
  const apiKey = keptSecret(path.join(dir, 'api-key'), 18)
  const secret = keptSecret(path.join(dir, 'cluster-secret'), 24)
  const postgres = localPostgres(path.join(dir, 'postgres'), path.join(dir, 'postgres-run'), options.postgresPort)
  postgres.start()
  const databaseUrl = postgres.url
  const children: { name: string; child: ChildProcess }[] = []
  const nodePorts: number[] = []
  // HAProxy (on this machine) tells the nodes each client's address: the per-address limits count clients, not HAProxy.
  const env = { ...process.env, DATABASE_URL: databaseUrl, CLUSTER_SECRET: secret, API_KEYS: apiKey, BASE_DOMAIN: 'localhost', REQUEST_LOG: '0', TRUSTED_PROXIES: '127.0.0.1' }
  for (let index = 1; index <= options.nodes; index += 1) {
    const port = options.port + index
    const nodeDir = path.join(dir, `node${index}`)
    fs.mkdirSync(nodeDir, { recursive: true, mode: 0o700 })
    const nodeEnv = { ...env, NODE_ID: `node${index}`, PORT: String(port), ADMIN_PORT: String(options.port + 10 + index), INTERNAL_PORT: String(options.port + 20 + index), DATA_DIR: nodeDir }
    const log = logTo(path.join(dir, `node${index}.log`))
    children.push({ name: `node${index}`, child: spawn(process.execPath, [CLI, 'serve'], { env: nodeEnv, stdio: ['ignore', log, log] }) })
    nodePorts.push(port)
  }
  const configFile = path.join(dir, 'haproxy.cfg')
  fs.writeFileSync(
    configFile,
    haproxyConfig({ nodes: nodePorts.map((port) => `127.0.0.1:${port}`), bind: `127.0.0.1:${options.port}`, publicHost: 'localhost', checkEveryMs: 500, stats: null, maxConnections: 4096 }),
  )
  const haproxyLog = logTo(path.join(dir, 'haproxy.log'))
  children.push({ name: 'haproxy', child: spawn('haproxy', ['-db', '-f', configFile], { stdio: ['ignore', haproxyLog, haproxyLog] }) })

  console.log(`TimeLedger demo cluster in ${dir}
  PostgreSQL   ${databaseUrl}
  HAProxy      http://127.0.0.1:${options.port}  (tenants at http://<tenant>.localhost:${options.port}/v1, or http://localhost:${options.port}/tenant/<tenant>/v1)
  API key      ${apiKey}
${children.map(({ name, child }) => `  ${name.padEnd(12)} pid ${child.pid}${name.startsWith('node') ? `, port ${options.port + Number(name.slice(4))}` : ''}`).join('\n')}
  logs         ${dir}/*.log

Kill a node with kill -9 <pid> and keep working through HAProxy: its tenants move once their leases run out.
See the cluster: DATABASE_URL=${databaseUrl} CLUSTER_SECRET=$(cat ${dir}/cluster-secret) API_KEYS=${apiKey} node ${CLI} cluster
Ctrl-C stops everything.`)

  let stopping = false
  const stop = async () => {
    if (stopping) return
    stopping = true
    console.log('stopping the nodes, HAProxy and PostgreSQL')
    await Promise.all(
      children.map(
        ({ child }) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve()
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
  for (const { name, child } of children) {
    child.on('exit', (code, signal) => {
      if (!stopping) console.log(`${name} (pid ${child.pid}) ended: ${signal ?? `exit ${code}`}`)
    })
  }
  await new Promise<never>(() => undefined)
}
