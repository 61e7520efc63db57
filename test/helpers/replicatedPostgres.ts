/*
 * PostgreSQL as the README's "A synchronous standby, and promoting it"
 * runs it, for a test that fails the primary over again and again while
 * writes go on (test/cluster/nemesis.test.ts): a primary with one standby
 * in synchronous streaming replication (synchronous_standby_names = '*',
 * so a COMMIT returns only once the standby flushed it), and:
 *
 *   failover()    the primary is killed (pg_ctl's immediate stop: what a
 *                 crash leaves) and the standby promoted; the promoted
 *                 server runs without a standby, asynchronously
 *                 (synchronous_standby_names = '', or its writes would wait
 *                 for a standby that is not there), as the README says to.
 *   addStandby()  a new standby of the current primary (pg_basebackup -R,
 *                 in a fresh directory on a fresh port), and once it
 *                 streams, synchronous replication on again (ALTER SYSTEM +
 *                 reload on the primary). Until it returns, a failover
 *                 could lose acknowledged writes, so a caller fails over
 *                 only while `synchronous` is true.
 *
 * Everything runs as the `postgres` user when the test is root (PostgreSQL
 * refuses root; src/cluster/localPostgres.ts), on loopback, `trust`
 * authentication, each server's socket and log in one run directory.
 * Every binary is awaited (execFile), never run synchronously: the test
 * process drives writers and TCP proxies meanwhile, and a blocked event
 * loop would stall them for the whole promotion or base backup. `stop()`
 * (synchronous, also on SIGTERM: stopOnSignal.ts) kills every server and
 * removes the directories.
 */
import { execFile, execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import postgres from 'postgres'
import { postgresBinDir, postgresOwnedDir } from '../../src/cluster/localPostgres.js'
import { freePort } from './freePort.js'
import { stopOnSignal } from './stopOnSignal.js'

const DB_USER = 'postgres'
/** How long pg_ctl waits for a start or a promotion. */
const PG_CTL_TIMEOUT_SECONDS = 60
/** How long a new standby may take to stream, and then to be the synchronous one. */
const STANDBY_TIMEOUT_MS = 60_000
const POLL_MS = 50

const execFileAsync = promisify(execFile)

interface PostgresInstance {
  readonly port: number
  readonly dataDir: string
  /** postgres://postgres@127.0.0.1:<port>/<database> */
  urlOf(database?: string): string
}

export interface ReplicatedPostgres {
  readonly primary: PostgresInstance
  readonly standby: PostgresInstance | null
  /** A standby exists and the primary waits for it at every COMMIT: a failover loses nothing acknowledged. */
  readonly synchronous: boolean
  /** Promotions so far. */
  readonly failovers: number
  /** Kills the primary and promotes the standby (see the top); answers the new primary. */
  failover(): Promise<PostgresInstance>
  /** Makes a new synchronous standby of the primary (see the top). */
  addStandby(): Promise<PostgresInstance>
  /** Creates a database on the primary (the standby gets it by replication); answers its name. */
  createDatabase(name: string): Promise<string>
  /** Kills every server and removes the directories. */
  stop(): void
}

function binaryCall(command: string, args: readonly string[]): [string, string[]] {
  const binary = path.join(postgresBinDir(), command)
  return process.getuid?.() === 0 ? ['runuser', ['-u', DB_USER, '--', binary, ...args]] : [binary, [...args]]
}

async function asPostgres(command: string, args: readonly string[]): Promise<string> {
  const [file, fileArgs] = binaryCall(command, args)
  try {
    return (await execFileAsync(file, fileArgs, { encoding: 'utf8' })).stdout
  } catch (error) {
    const { stderr } = error as { stderr?: string }
    throw new Error(`${command} ${args.join(' ')} failed: ${stderr ?? String(error)}`)
  }
}

function instance(port: number, dataDir: string): PostgresInstance {
  return { port, dataDir, urlOf: (database = 'postgres') => `postgres://${DB_USER}@127.0.0.1:${port}/${database}` }
}

/** pg_ctl's immediate stop, synchronous: for stop(), which also runs from a signal handler. */
function killSync(dataDir: string): void {
  try {
    const [file, args] = binaryCall('pg_ctl', ['-D', dataDir, '-m', 'immediate', '-w', 'stop'])
    execFileSync(file, args, { stdio: 'ignore' })
  } catch {
    // Not running.
  }
}

/** Sets postgresql.auto.conf's `name` (what ALTER SYSTEM writes) in a data directory whose server is not running. */
function setAutoConf(dataDir: string, name: string, value: string): void {
  const file = path.join(dataDir, 'postgresql.auto.conf')
  const kept = fs.existsSync(file)
    ? fs
        .readFileSync(file, 'utf8')
        .split('\n')
        .filter((line) => !line.trimStart().startsWith(`${name} `) && !line.trimStart().startsWith(`${name}=`))
    : []
  fs.writeFileSync(file, `${[...kept.filter((line) => line !== ''), `${name} = '${value}'`].join('\n')}\n`)
}

async function sqlOn(server: PostgresInstance, work: (sql: postgres.Sql) => Promise<void>): Promise<void> {
  const sql = postgres(server.urlOf(), { max: 1, onnotice: () => undefined })
  try {
    await work(sql)
  } finally {
    await sql.end({ timeout: 1 })
  }
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, POLL_MS))
  }
}

/** A primary and its synchronous standby, started. */
export async function startReplicatedPostgres(): Promise<ReplicatedPostgres> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'timeledger-pgrepl-'))
  fs.chmodSync(root, 0o755)
  const runDir = postgresOwnedDir(path.join(root, 'run'))
  let servers = 0
  const start = (server: PostgresInstance) =>
    asPostgres('pg_ctl', [
      '-D',
      server.dataDir,
      '-w',
      '-t',
      String(PG_CTL_TIMEOUT_SECONDS),
      '-l',
      path.join(runDir, `postgres-${server.port}.log`),
      '-o',
      `-c listen_addresses=127.0.0.1 -c port=${server.port} -k ${runDir} -c fsync=on -c max_connections=200`,
      'start',
    ])

  const firstDir = postgresOwnedDir(path.join(root, `server-${servers++}`))
  await asPostgres('initdb', ['-D', firstDir, '-U', DB_USER, '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C'])
  let primary = instance(await freePort(), firstDir)
  let standby: PostgresInstance | null = null
  let synchronous = false
  let failovers = 0
  const running = new Set<string>([firstDir])
  await start(primary)

  const stop = () => {
    forgetOnSignal()
    for (const dataDir of running) killSync(dataDir)
    running.clear()
    fs.rmSync(root, { recursive: true, force: true })
  }
  const forgetOnSignal = stopOnSignal(stop)

  const replicationState = async (server: PostgresInstance): Promise<{ state: string; syncState: string }[]> => {
    let rows: { state: string; syncState: string }[] = []
    await sqlOn(server, async (sql) => {
      rows = await sql<{ state: string; syncState: string }[]>`SELECT state, sync_state AS "syncState" FROM pg_stat_replication`
    })
    return rows
  }

  const cluster: ReplicatedPostgres = {
    get primary() {
      return primary
    },
    get standby() {
      return standby
    },
    get synchronous() {
      return synchronous
    },
    get failovers() {
      return failovers
    },
    async addStandby() {
      if (standby !== null) throw new Error('addStandby: there is a standby already')
      const server = instance(await freePort(), postgresOwnedDir(path.join(root, `server-${servers++}`)))
      await asPostgres('pg_basebackup', ['-h', '127.0.0.1', '-p', String(primary.port), '-U', DB_USER, '-D', server.dataDir, '-R', '-X', 'stream', '-c', 'fast'])
      // The copy carries the primary's '*': promoted, it would wait for a standby of its own that is not there.
      setAutoConf(server.dataDir, 'synchronous_standby_names', '')
      running.add(server.dataDir)
      await start(server)
      standby = server
      await until('the new standby streams', async () => (await replicationState(primary)).some((row) => row.state === 'streaming'), STANDBY_TIMEOUT_MS)
      await sqlOn(primary, async (sql) => {
        await sql`ALTER SYSTEM SET synchronous_standby_names = '*'`
        await sql`SELECT pg_reload_conf()`
      })
      await until('the standby is synchronous', async () => (await replicationState(primary)).some((row) => row.syncState === 'sync'), STANDBY_TIMEOUT_MS)
      synchronous = true
      return server
    },
    async failover() {
      const promoted = standby
      if (promoted === null) throw new Error('failover: there is no standby to promote')
      const old = primary
      synchronous = false
      await asPostgres('pg_ctl', ['-D', old.dataDir, '-m', 'immediate', '-w', 'stop'])
      running.delete(old.dataDir)
      await asPostgres('pg_ctl', ['-D', promoted.dataDir, '-w', '-t', String(PG_CTL_TIMEOUT_SECONDS), 'promote'])
      primary = promoted
      standby = null
      failovers += 1
      fs.rmSync(old.dataDir, { recursive: true, force: true })
      return primary
    },
    async createDatabase(name) {
      await sqlOn(primary, async (sql) => {
        await sql.unsafe(`CREATE DATABASE "${name}"`)
      })
      return name
    },
    stop,
  }
  try {
    await cluster.addStandby()
  } catch (error) {
    stop()
    throw error
  }
  return cluster
}
