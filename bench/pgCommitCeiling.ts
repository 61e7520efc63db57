/*
 * PostgreSQL's own ceiling for small durable transactions on this machine,
 * without TimeLedger: pgbench (PostgreSQL's C load client) runs a script
 * of one INSERT per transaction from several connections for a few
 * seconds, against a table shaped like the cluster's log (a bigint key and
 * a ~300-byte bytea: a typical log entry of one time record), with the
 * server's defaults (fsync on, synchronous_commit on: each COMMIT waits for
 * its WAL flush; concurrent commits share a flush). A second script
 * inserts ROWS_PER_GROUP rows per transaction, like one group commit of a
 * node carrying many tenants' entries, from 4 and from 16 connections (as
 * many nodes, each with one group in flight). PostgreSQL's CPU (all its
 * processes) is read around each run.
 */
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import postgres from 'postgres'
import { processTreeCpuMicros } from './processTreeCpu.js'

const PGBENCH = '/usr/lib/postgresql/15/bin/pgbench'
export const ROWS_PER_GROUP = 32
const ENTRY_HEX = 'ab'.repeat(300)

export interface CommitCeilingFigure {
  readonly rowsPerCommit: number
  readonly connections: number
  readonly commitsPerSecond: number
  readonly rowsPerSecond: number
  readonly averageLatencyMs: number
  /** PostgreSQL's CPU per commit (all its processes), µs. */
  readonly pgCpuMicrosPerCommit: number | null
}

async function runPgbench(databaseUrl: string, postmasterPid: number, rowsPerCommit: number, connections: number, durationSeconds: number): Promise<CommitCeilingFigure> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-pgbench-'))
  try {
    const script = path.join(dir, 'insert.sql')
    const values = rowsPerCommit === 1 ? `VALUES (decode('${ENTRY_HEX}', 'hex'))` : `SELECT decode('${ENTRY_HEX}', 'hex') FROM generate_series(1, ${rowsPerCommit})`
    fs.writeFileSync(script, `INSERT INTO commit_probe (entry) ${values};\n`)
    const url = new URL(databaseUrl)
    const args = [
      '-n',
      '-f',
      script,
      '-c',
      String(connections),
      '-j',
      String(Math.min(connections, 2)),
      '-T',
      String(durationSeconds),
      '-h',
      url.hostname,
      '-p',
      url.port,
      '-U',
      url.username,
      url.pathname.slice(1),
    ]
    const before = processTreeCpuMicros(postmasterPid)
    const { stdout } = await promisify(execFile)(PGBENCH, args, { timeout: (durationSeconds + 60) * 1000 })
    const after = processTreeCpuMicros(postmasterPid)
    const tps = /^tps = ([\d.]+)/m.exec(stdout)
    const latency = /^latency average = ([\d.]+) ms/m.exec(stdout)
    const transactions = /^number of transactions actually processed: (\d+)/m.exec(stdout)
    if (tps === null || latency === null || transactions === null) throw new Error(`pgbench printed no figures:\n${stdout}`)
    const commits = Number(transactions[1])
    return {
      rowsPerCommit,
      connections,
      commitsPerSecond: Number(tps[1]),
      rowsPerSecond: Number(tps[1]) * rowsPerCommit,
      averageLatencyMs: Number(latency[1]),
      pgCpuMicrosPerCommit: before === null || after === null || commits === 0 ? null : (after - before) / commits,
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

/** Single-row commits from 1 and 16 connections, and ROWS_PER_GROUP-row commits from 4 and 16 (as many nodes). */
export async function measureCommitCeiling(databaseUrl: string, postmasterPid: number, durationSeconds: number): Promise<CommitCeilingFigure[]> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => undefined })
  try {
    await sql`CREATE TABLE IF NOT EXISTS commit_probe (id bigserial PRIMARY KEY, entry bytea NOT NULL)`
  } finally {
    await sql.end()
  }
  const figures: CommitCeilingFigure[] = []
  for (const [rows, connections] of [
    [1, 1],
    [1, 16],
    [ROWS_PER_GROUP, 4],
    [ROWS_PER_GROUP, 16],
  ] as const)
    figures.push(await runPgbench(databaseUrl, postmasterPid, rows, connections, durationSeconds))
  return figures
}

/** The postmaster's pid: the first line of postmaster.pid in its data directory. */
export function postmasterPid(dataDir: string): number {
  return Number(fs.readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0])
}
