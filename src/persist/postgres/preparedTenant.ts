/*
 * What a node holds in memory of one tenant's stored data, loaded before
 * it is touched (PgStorage.prepare), so that the synchronous reads of the
 * ports (recovery's, the operator tools') answer at once:
 *
 *   runs       the sequence numbers of its log (logRuns.ts): lastSeq,
 *              firstSeq, logLength, hasEntry; kept current by appends,
 *              pruning and truncation for as long as the tenant is held
 *   snapshots  its snapshot listing, newest first (without the corrupt ones
 *              set aside); kept current by writes and pruning
 *   loaded     the newest snapshot whose checks pass (at or before
 *              `uptoSeq`), its parts as they were read (heldSnapshot.ts:
 *              a binary COPY, checked as they arrive, never joined), with
 *              the problem of each newer one that failed them; with
 *              `everySnapshot` every one that passes (an operator's restore
 *              to an earlier point picks its base among them); dropped by
 *              forget()
 *   entries    the log entries after that snapshot (all of them with
 *              `wholeLog`), raw, decoded when read; appends that commit
 *              meanwhile join them; dropped by forget()
 *
 * `loadPreparedTenant` reads it all: the listing and the runs (gaps and
 * islands over the log's keys: a row per run) together, then the
 * snapshots' parts newest first until one checks, then the entries.
 */
import type { SnapshotFaults } from '../snapshotFaults.js'
import type { Sql } from './connection.js'
import { readHeldSnapshot, type HeldSnapshot } from './heldSnapshot.js'
import { LogRuns } from './logRuns.js'

export interface StoredSnapshot {
  seq: number
  at: number
  format: number
  bodyBytes: number
  sha256: string
  totalBytes: number
}

interface HeldEntries {
  /** Entries held are all of the log's after this sequence number. */
  after: number
  readonly seqs: number[]
  readonly bytes: Buffer[]
}

export interface PreparedTenant {
  readonly runs: LogRuns
  /** Newest first. */
  snapshots: StoredSnapshot[]
  /** The snapshots loaded, by sequence number. */
  readonly loaded: Map<number, HeldSnapshot>
  /** Why a snapshot newer than the one loaded failed its checks. */
  readonly problems: Map<number, string>
  entries: HeldEntries | null
}

export interface PrepareOptions {
  /** Every entry the log keeps, not only those after the newest good snapshot (history, restore, export). */
  wholeLog?: boolean
  /** Load the newest good snapshot at or before this sequence number (a restore to an earlier point). */
  uptoSeq?: number
  /** Load every good snapshot (at or before uptoSeq), not only the newest: a restore whose point is not yet known. */
  everySnapshot?: boolean
}

/** How a store names a snapshot (SnapshotListing.file): the tenant and the sequence number. */
export function snapshotName(tenant: string, seq: number): string {
  return `pg:${tenant}/${seq}`
}

export function parseSnapshotName(name: string): { tenant: string; seq: number } {
  const slash = name.lastIndexOf('/')
  if (!name.startsWith('pg:') || slash < 0) throw new Error(`'${name}' does not name a snapshot in PostgreSQL`)
  return { tenant: name.slice(3, slash), seq: Number(name.slice(slash + 1)) }
}

/** The tenant's snapshots, newest first; not those set aside as corrupt, nor those not yet placed (pgSnapshots.ts: a negative seq). */
export async function snapshotListing(sql: Sql, tenant: string): Promise<StoredSnapshot[]> {
  return sql<StoredSnapshot[]>`
    SELECT seq, at, format, body_bytes AS "bodyBytes", sha256, total_bytes AS "totalBytes"
    FROM snapshots WHERE tenant = ${tenant} AND seq > 0 AND corrupt IS NULL ORDER BY seq DESC`
}

export async function loadPreparedTenant(
  sql: Sql,
  tenant: string,
  options: PrepareOptions,
  faults: SnapshotFaults,
  noteChecked: (name: string, problem: string | null) => void,
): Promise<PreparedTenant> {
  const [snapshots, runs] = await Promise.all([
    snapshotListing(sql, tenant),
    sql<{ from: number; to: number }[]>`
      SELECT min(seq) AS "from", max(seq) AS "to"
      FROM (SELECT seq, seq - row_number() OVER (ORDER BY seq) AS island FROM log WHERE tenant = ${tenant}) AS numbered
      GROUP BY island ORDER BY 1`,
  ])
  const prepared: PreparedTenant = { runs: LogRuns.of(runs), snapshots, loaded: new Map(), problems: new Map(), entries: null }
  let base = 0
  for (const snapshot of snapshots) {
    if (options.uptoSeq !== undefined && snapshot.seq > options.uptoSeq) continue
    const { held, problem } = await readHeldSnapshot(sql, tenant, snapshot.seq)
    const name = snapshotName(tenant, snapshot.seq)
    noteChecked(name, problem)
    if (problem === null) {
      prepared.loaded.set(snapshot.seq, held)
      base = Math.max(base, snapshot.seq)
      if (options.everySnapshot === true) continue
      break
    }
    prepared.problems.set(snapshot.seq, problem)
    faults.note(tenant, name, problem, 'skipped')
  }
  const after = options.wholeLog === true ? 0 : base
  const rows = await sql<{ seq: number; entry: Buffer }[]>`SELECT seq, entry FROM log WHERE tenant = ${tenant} AND seq > ${String(after)} ORDER BY seq`
  prepared.entries = { after, seqs: rows.map((row) => row.seq), bytes: rows.map((row) => row.entry) }
  return prepared
}
