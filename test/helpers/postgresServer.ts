/*
 * A real PostgreSQL for a test: a fresh cluster made with initdb in a
 * temporary directory, started with pg_ctl on a free loopback port, its
 * socket in that directory too (-k), fsync on (the durability tests kill
 * it and read back what was acknowledged). PostgreSQL refuses to run as
 * root and CI runs as root, so every binary runs as the `postgres` user
 * (runuser) when the test is root, in a directory that user owns
 * (ARCHITECTURE.md §10). Authentication is `trust`, loopback only.
 *
 * `stop()` is pg_ctl's immediate stop (no checkpoint: what a crash leaves)
 * and removes the directory (also when the test process is ended by a
 * signal: stopOnSignal.ts); `kill()` only stops the server the same way,
 * keeping the directory so that `start()` brings the same cluster back
 * (crash recovery from its WAL). With `standby: true` a second cluster is
 * made from the first by pg_basebackup -R and started as its synchronous
 * standby (synchronous_standby_names = '*' on the primary: a COMMIT
 * returns only once the standby flushed it); `promote()` kills the primary
 * and promotes the standby, answering the standby's URL. `freshDatabase()`
 * makes an empty database on it, so each test starts from nothing.
 */
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import postgres from 'postgres'
import { postgresBinDir } from '../../src/cluster/localPostgres.js'
import { freePort } from './freePort.js'
import { stopOnSignal } from './stopOnSignal.js'

const DB_USER = 'postgres'
/** How long pg_ctl waits for a start or a promotion. */
const START_TIMEOUT_SECONDS = 60

export interface PostgresServer {
  /** postgres://… of the primary (after promote(): still the old primary's; use promote's answer). */
  readonly url: string
  readonly dataDir: string
  readonly port: number
  /** Starts the primary again after kill(). */
  start(): void
  /** Stops the primary at once (pg_ctl -m immediate): a crash; the data directory stays. */
  kill(): void
  /** Stops everything at once and removes the directories. */
  stop(): void
  /** With a standby: kills the primary, promotes the standby, answers the standby's URL. */
  promote(): string
  readonly standby?: { readonly url: string; readonly dataDir: string; readonly port: number }
  /** Creates a fresh, empty database on the primary; answers its URL (one per test). */
  freshDatabase(): Promise<string>
}

function asPostgres(command: string, args: string[]): string {
  const binary = path.join(postgresBinDir(), command)
  const isRoot = process.getuid?.() === 0
  const [file, fileArgs] = isRoot ? ['runuser', ['-u', DB_USER, '--', binary, ...args]] : [binary, args]
  return execFileSync(file, fileArgs, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
}

/** A directory the postgres user owns and nobody else reads (initdb wants 0700). */
function ownedDir(parent: string, name: string): string {
  const dir = path.join(parent, name)
  fs.mkdirSync(dir, { mode: 0o700 })
  if (process.getuid?.() === 0) {
    const uid = Number(execFileSync('id', ['-u', DB_USER], { encoding: 'utf8' }).trim())
    const gid = Number(execFileSync('id', ['-g', DB_USER], { encoding: 'utf8' }).trim())
    fs.chownSync(dir, uid, gid)
  }
  return dir
}

function serverOptions(port: number, socketDir: string): string {
  return `-c listen_addresses=127.0.0.1 -c port=${port} -k ${socketDir} -c fsync=on -c max_connections=100`
}

function pgCtlStart(dataDir: string, port: number, socketDir: string): void {
  asPostgres('pg_ctl', ['-D', dataDir, '-w', '-t', String(START_TIMEOUT_SECONDS), '-l', path.join(socketDir, `log-${port}.txt`), '-o', serverOptions(port, socketDir), 'start'])
}

function pgCtlKill(dataDir: string): void {
  try {
    asPostgres('pg_ctl', ['-D', dataDir, '-m', 'immediate', '-w', 'stop'])
  } catch {
    // Not running (already killed).
  }
}

function urlOf(port: number, database = 'postgres'): string {
  return `postgres://${DB_USER}@127.0.0.1:${port}/${database}`
}

let databases = 0

async function createDatabase(port: number): Promise<string> {
  databases += 1
  const name = `test_${process.pid}_${databases}`
  const admin = postgres(urlOf(port), { max: 1, onnotice: () => undefined })
  try {
    await admin.unsafe(`CREATE DATABASE ${name}`)
  } finally {
    await admin.end()
  }
  return urlOf(port, name)
}

export async function startPostgres(options: { standby?: boolean } = {}): Promise<PostgresServer> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'timeledger-pg-'))
  fs.chmodSync(root, 0o755)
  const socketDir = ownedDir(root, 'run')
  const dataDir = ownedDir(root, 'primary')
  const port = await freePort()
  asPostgres('initdb', ['-D', dataDir, '-U', DB_USER, '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C'])
  if (options.standby === true) fs.appendFileSync(path.join(dataDir, 'postgresql.conf'), "\nsynchronous_standby_names = '*'\n")
  pgCtlStart(dataDir, port, socketDir)
  let standby: PostgresServer['standby']
  if (options.standby === true) {
    const standbyDir = ownedDir(root, 'standby')
    const standbyPort = await freePort()
    asPostgres('pg_basebackup', ['-h', '127.0.0.1', '-p', String(port), '-U', DB_USER, '-D', standbyDir, '-R', '-X', 'stream', '-c', 'fast'])
    fs.appendFileSync(path.join(standbyDir, 'postgresql.conf'), "\nsynchronous_standby_names = ''\n")
    pgCtlStart(standbyDir, standbyPort, socketDir)
    standby = { url: urlOf(standbyPort), dataDir: standbyDir, port: standbyPort }
  }
  const stop = () => {
    forgetOnSignal()
    pgCtlKill(dataDir)
    if (standby !== undefined) pgCtlKill(standby.dataDir)
    fs.rmSync(root, { recursive: true, force: true })
  }
  const forgetOnSignal = stopOnSignal(stop)
  return {
    url: urlOf(port),
    dataDir,
    port,
    standby,
    freshDatabase: () => createDatabase(port),
    start: () => pgCtlStart(dataDir, port, socketDir),
    kill: () => pgCtlKill(dataDir),
    stop,
    promote: () => {
      if (standby === undefined) throw new Error('startPostgres: promote() needs { standby: true }')
      pgCtlKill(dataDir)
      asPostgres('pg_ctl', ['-D', standby.dataDir, '-w', '-t', String(START_TIMEOUT_SECONDS), 'promote'])
      return standby.url
    },
  }
}
