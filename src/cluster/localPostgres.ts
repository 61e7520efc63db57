/*
 * A PostgreSQL server on this machine, run from Debian's `postgresql`
 * package binaries (/usr/lib/postgresql/<version>/bin, the newest version
 * there): the local demo cluster (localDemo.ts) and the tests start one.
 *
 * PostgreSQL refuses to run as root, so when this process is root every
 * binary runs as the `postgres` user (runuser) in directories that user
 * owns (ARCHITECTURE.md §10). The server listens on loopback only, on the given
 * port, with its socket in its own run directory (-k), fsync on, and
 * `trust` authentication for loopback (a local demo or test, never a
 * deployment). `stop` is pg_ctl's fast stop (a checkpoint), `kill` its
 * immediate stop (what a crash leaves: recovery from the WAL at the next
 * start).
 */
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'

const DB_USER = 'postgres'
/** How long pg_ctl waits for a start, a stop or a promotion. */
const PG_CTL_TIMEOUT_SECONDS = 60
const DEBIAN_ROOT = '/usr/lib/postgresql'

/** The bin directory of the newest PostgreSQL that Debian's packages installed; throws naming the package when none. */
export function postgresBinDir(): string {
  const versions = fs.existsSync(DEBIAN_ROOT) ? fs.readdirSync(DEBIAN_ROOT).filter((name) => /^\d+$/.test(name)) : []
  const newest = versions.sort((a, b) => Number(b) - Number(a))[0]
  if (newest === undefined) throw new Error(`no PostgreSQL under ${DEBIAN_ROOT}: install Debian's package (apt-get install postgresql)`)
  return path.join(DEBIAN_ROOT, newest, 'bin')
}

function isRoot(): boolean {
  return process.getuid?.() === 0
}

/** Runs a PostgreSQL binary, as the postgres user when this process is root; answers its standard output. */
function runPostgresBinary(command: string, args: readonly string[]): string {
  const binary = path.join(postgresBinDir(), command)
  const [file, fileArgs] = isRoot() ? ['runuser', ['-u', DB_USER, '--', binary, ...args]] : [binary, [...args]]
  return execFileSync(file, fileArgs, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
}

/**
 * Throws a message saying what to do when PostgreSQL, run as the postgres user, could not enter `dir` (a folder above
 * it closed to other users, as /root is): initdb would only say "Permission denied".
 */
export function assertPostgresCanEnter(dir: string): void {
  if (!isRoot()) return
  try {
    execFileSync('runuser', ['-u', DB_USER, '--', 'test', '-x', dir], { stdio: 'ignore' })
  } catch {
    throw new Error(
      `PostgreSQL runs as the ${DB_USER} user, who cannot enter ${dir}: a folder above it is closed to other users (as /root is); choose a folder it can reach (e.g. --dir /tmp/cluster-demo), or open the folders above to others (chmod o+x)`,
    )
  }
}

/** Makes `dir` (mode 0700) owned by the user PostgreSQL runs as. */
export function postgresOwnedDir(dir: string): string {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
  fs.chmodSync(dir, 0o700)
  if (isRoot()) {
    const uid = Number(execFileSync('id', ['-u', DB_USER], { encoding: 'utf8' }).trim())
    const gid = Number(execFileSync('id', ['-g', DB_USER], { encoding: 'utf8' }).trim())
    fs.chownSync(dir, uid, gid)
  }
  return dir
}

export interface LocalPostgres {
  /** postgres://postgres@127.0.0.1:<port>/postgres */
  readonly url: string
  readonly port: number
  readonly dataDir: string
  start(): void
  /** Fast stop: a checkpoint, then the server ends. */
  stop(): void
  /** Immediate stop: what a crash leaves. */
  kill(): void
}

/**
 * The server whose data directory is `dataDir` (made with initdb when it holds none yet), its socket and log under
 * `runDir`, listening on 127.0.0.1:`port`. Not started: call start().
 */
export function localPostgres(dataDir: string, runDir: string, port: number): LocalPostgres {
  postgresOwnedDir(runDir)
  if (!fs.existsSync(path.join(dataDir, 'PG_VERSION'))) {
    postgresOwnedDir(dataDir)
    runPostgresBinary('initdb', ['-D', dataDir, '-U', DB_USER, '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C'])
  }
  const options = `-c listen_addresses=127.0.0.1 -c port=${port} -k ${runDir} -c fsync=on -c max_connections=200`
  const pgCtl = (args: string[]) => runPostgresBinary('pg_ctl', ['-D', dataDir, '-w', '-t', String(PG_CTL_TIMEOUT_SECONDS), ...args])
  const stopWith = (mode: 'fast' | 'immediate') => {
    try {
      pgCtl(['-m', mode, 'stop'])
    } catch {
      // Not running.
    }
  }
  return {
    url: `postgres://${DB_USER}@127.0.0.1:${port}/postgres`,
    port,
    dataDir,
    start: () => void pgCtl(['-l', path.join(runDir, `postgres-${port}.log`), '-o', options, 'start']),
    stop: () => stopWith('fast'),
    kill: () => stopWith('immediate'),
  }
}
