/*
 * The SnapshotStore of cluster mode: a snapshot is the bytes of an
 * embedded snapshot file (snapshotFile.ts: the same header, body (format 6:
 * the columns as raw arrays, the small collections as slices) and
 * SHA-256), kept as a `snapshots` row and its bytes in `snapshot_parts` of
 * at most PART_BYTES each; it is named `pg:<tenant>/<seq>`.
 *
 * The synchronous members (list, readSteps, readHeader) answer from what
 * PgStorage.prepare loaded (preparedTenant.ts): the listing, and the bytes
 * of the newest snapshot that passed its checks (a newer one that failed
 * them reads as that failure, so recovery skips it). Writing, pruning and
 * removing are transactions fenced by the tenant's lease
 * (fencedTransaction.ts), and keep the prepared listing current. Pruning
 * applies the embedded rule (pruneSnapshotSet): a corrupt snapshot is set
 * aside by marking its row `corrupt` (no longer listed, kept for the
 * operator). A snapshot checked once (by prepare, a load, its writer) is not
 * read again to be checked: rows are never changed once written, but for
 * the one move below.
 *
 * An unplaced snapshot (an online restore's: tenants/installState.ts) is
 * stored whole at a negative seq, which no listing takes, while the tenant
 * serves; placing it is one transaction that inserts its `snapshots` row at
 * the sequence number, moves its parts there (an UPDATE of their seq, which
 * leaves their bytes where they are) and rewrites the first part, whose
 * header names the sequence number. Pruning removes the negative seqs that
 * are not this process's own (a restore killed before its swap).
 */
import { assert } from '../../assert.js'
import type { Steps } from '../../engine/steps.js'
import { type SnapshotBody, type SnapshotHeader, type SnapshotListing, type SnapshotSource, type SnapshotStore, type UnplacedSnapshot, SnapshotInvalidError } from '../ports.js'
import { SnapshotFaults } from '../snapshotFaults.js'
import { encodeSnapshotInSlices, snapshotBytesProblem, snapshotBytesSteps } from '../snapshotFile.js'
import { headerOf, headerPart, snapshotHeaderOf } from '../snapshotHeader.js'
import { pruneSnapshotSet } from '../snapshotPruning.js'
import type { Sql, TxSql } from './connection.js'
import { parseSnapshotName, snapshotBytes, snapshotListing, snapshotName, type PreparedTenant, type StoredSnapshot } from './preparedTenant.js'

/** The most bytes of one snapshot_parts row. */
export const PART_BYTES = 1024 * 1024
/** Past this many remembered checks the memory starts over. */
const MAX_CHECKED = 10_000
/** Unplaced snapshots numbered per millisecond: their negative seq is -(ms × this + a counter). */
const UNPLACED_PER_MS = 1000
let unplacedWritten = 0

function partCount(bytes: Buffer): number {
  return Math.max(1, Math.ceil(bytes.length / PART_BYTES))
}

export interface SnapshotHost {
  readonly sql: Sql
  /** The tenant's prepared data; throws naming the tenant when it was never prepared. */
  preparedOf(tenant: string): PreparedTenant
  /** The tenant's prepared data, when prepared. */
  preparedIfAny(tenant: string): PreparedTenant | undefined
  /** Runs `work` in a transaction fenced by the tenant's lease. */
  fenced<T>(tenant: string, work: (tx: TxSql) => Promise<T>): Promise<T>
}

export class PgSnapshots implements SnapshotStore {
  readonly faults = new SnapshotFaults()
  private readonly checked = new Map<string, string | null>()
  /** This process's unplaced snapshots, as `<tenant>/<negative seq>`: pruning leaves them. */
  private readonly unplaced = new Set<string>()

  constructor(private readonly host: SnapshotHost) {}

  list(tenant: string): SnapshotListing[] {
    return this.host.preparedOf(tenant).snapshots.map((snapshot) => ({ seq: snapshot.seq, file: snapshotName(tenant, snapshot.seq), bytes: snapshot.totalBytes }))
  }

  *readSteps(file: string): Steps<{ header: SnapshotHeader; body: SnapshotBody }> {
    const { tenant, seq } = parseSnapshotName(file)
    const prepared = this.host.preparedOf(tenant)
    const problem = prepared.problems.get(seq)
    if (problem !== undefined) throw new SnapshotInvalidError(problem)
    const bytes = prepared.loaded.get(seq)
    if (bytes === undefined) throw new Error(`snapshot ${file} was not loaded: prepare loads the newest good one (prepare the tenant again, with uptoSeq for an older one)`)
    return yield* snapshotBytesSteps(bytes)
  }

  readHeader(file: string): SnapshotHeader {
    const { tenant, seq } = parseSnapshotName(file)
    const snapshot = this.host.preparedOf(tenant).snapshots.find((listed) => listed.seq === seq)
    if (snapshot === undefined) throw new Error(`no snapshot ${file}`)
    return { format: snapshot.format, tenant, seq, at: snapshot.at, bodyBytes: snapshot.bodyBytes, sha256: snapshot.sha256 }
  }

  noteChecked(file: string, problem: string | null): void {
    if (this.checked.size >= MAX_CHECKED) this.checked.clear()
    this.checked.set(file, problem)
  }

  async write(tenant: string, seq: number, at: number, body: SnapshotSource, onProgress?: (recordsDone: number) => void): Promise<{ file: string; bytes: number }> {
    const bytes = await encodeSnapshotInSlices(tenant, seq, at, body, onProgress)
    await this.insert(tenant, seq, at, bytes)
    return this.listed(tenant, seq, at, bytes)
  }

  /**
   * Encodes the bytes now (a slice per turn) and stores them as a snapshot at a negative seq, which no listing takes
   * (see the top); `place` moves its parts to their sequence number in one transaction that writes no part but the
   * first (its header names the sequence number).
   */
  async writeUnplaced(tenant: string, at: number, body: SnapshotSource, onProgress?: (recordsDone: number) => void): Promise<UnplacedSnapshot> {
    const bytes = await encodeSnapshotInSlices(tenant, 0, at, body, onProgress)
    const { bodyBytes, sha256, format } = snapshotHeaderOf(bytes)
    unplacedWritten = (unplacedWritten + 1) % UNPLACED_PER_MS
    const unplacedSeq = -(Date.now() * UNPLACED_PER_MS + unplacedWritten)
    const key = `${tenant}/${unplacedSeq}`
    this.unplaced.add(key)
    try {
      await this.insert(tenant, unplacedSeq, at, bytes)
    } catch (error) {
      this.unplaced.delete(key)
      throw error
    }
    const parts = partCount(bytes)
    let settled = false
    return {
      place: async (seq) => {
        assert(!settled, 'an unplaced snapshot is placed or discarded once')
        settled = true
        // The header's room does not depend on the sequence number (snapshotHeader.ts): the body stays where it is.
        headerPart(headerOf(tenant, seq, at, bodyBytes, sha256)).copy(bytes, 0)
        try {
          await this.host.fenced(tenant, async (tx) => {
            await tx`DELETE FROM snapshots WHERE tenant = ${tenant} AND seq = ${String(seq)}`
            await tx`INSERT INTO snapshots (tenant, seq, at, format, body_bytes, sha256, parts, total_bytes)
               VALUES (${tenant}, ${String(seq)}, ${String(at)}, ${format}, ${String(bodyBytes)}, ${sha256}, ${parts}, ${String(bytes.length)})`
            const moved = await tx`UPDATE snapshot_parts SET seq = ${String(seq)} WHERE tenant = ${tenant} AND seq = ${String(unplacedSeq)}`
            if (moved.count !== parts) throw new Error(`snapshot of tenant '${tenant}' to place at seq ${seq}: ${moved.count} of its ${parts} parts are stored`)
            await tx`UPDATE snapshot_parts SET bytes = ${bytes.subarray(0, PART_BYTES)} WHERE tenant = ${tenant} AND seq = ${String(seq)} AND part = 0`
            await tx`DELETE FROM snapshots WHERE tenant = ${tenant} AND seq = ${String(unplacedSeq)}`
          })
        } finally {
          this.unplaced.delete(key)
        }
        return this.listed(tenant, seq, at, bytes)
      },
      discard: async () => {
        if (settled) return
        settled = true
        this.unplaced.delete(key)
        await this.host.fenced(tenant, (tx) => tx`DELETE FROM snapshots WHERE tenant = ${tenant} AND seq = ${String(unplacedSeq)}`)
      },
    }
  }

  /** Stores `bytes` as the snapshot at `seq` (replacing one there), in one transaction fenced by the lease. */
  private async insert(tenant: string, seq: number, at: number, bytes: Buffer): Promise<void> {
    const header = snapshotHeaderOf(bytes)
    const parts = partCount(bytes)
    await this.host.fenced(tenant, async (tx) => {
      await tx`DELETE FROM snapshots WHERE tenant = ${tenant} AND seq = ${String(seq)}`
      const statements: Promise<unknown>[] = [
        tx`INSERT INTO snapshots (tenant, seq, at, format, body_bytes, sha256, parts, total_bytes)
           VALUES (${tenant}, ${String(seq)}, ${String(at)}, ${header.format}, ${String(header.bodyBytes)}, ${header.sha256}, ${parts}, ${String(bytes.length)})`,
      ]
      for (let part = 0; part < parts; part += 1) {
        statements.push(tx`INSERT INTO snapshot_parts (tenant, seq, part, bytes) VALUES (${tenant}, ${String(seq)}, ${part}, ${bytes.subarray(part * PART_BYTES, (part + 1) * PART_BYTES)})`)
      }
      await Promise.all(statements)
    })
  }

  /** The snapshot stored at `seq`, now listed (checked: its writer made it) in the prepared listing. */
  private listed(tenant: string, seq: number, at: number, bytes: Buffer): { file: string; bytes: number } {
    const header = snapshotHeaderOf(bytes)
    const stored: StoredSnapshot = { seq, at, format: header.format, bodyBytes: header.bodyBytes, sha256: header.sha256, totalBytes: bytes.length }
    const file = snapshotName(tenant, seq)
    this.noteChecked(file, null)
    const prepared = this.host.preparedIfAny(tenant)
    if (prepared !== undefined) prepared.snapshots = [stored, ...prepared.snapshots.filter((listed) => listed.seq !== seq)].sort((a, b) => b.seq - a.seq)
    return { file, bytes: bytes.length }
  }

  async prune(tenant: string, kept: number, windowStartMs: number, startsLogLine: (seq: number) => boolean): Promise<number> {
    const snapshots = (await snapshotListing(this.host.sql, tenant)).map((snapshot) => ({ seq: snapshot.seq, at: snapshot.at, file: snapshotName(tenant, snapshot.seq), bytes: snapshot.totalBytes }))
    const removed: number[] = []
    const setAside: { seq: number; problem: string }[] = []
    const logNeededAfter = await pruneSnapshotSet(snapshots, kept, windowStartMs, startsLogLine, {
      problemOf: (snapshot) => this.problemOf(tenant, snapshot.seq),
      remove: async (snapshot) => removed.push(snapshot.seq),
      setAside: async (snapshot, problem) => {
        this.faults.note(tenant, snapshot.file, problem, 'set aside')
        setAside.push({ seq: snapshot.seq, problem })
      },
    })
    const ownUnplaced = [...this.unplaced].filter((key) => key.startsWith(`${tenant}/`)).map((key) => key.slice(tenant.length + 1))
    await this.host.fenced(tenant, async (tx) => {
      // Snapshots left unplaced by a writer that stopped (a restore killed before its swap); this process's own stay.
      const statements: Promise<unknown>[] = [tx`DELETE FROM snapshots WHERE tenant = ${tenant} AND seq < 0 AND seq <> ALL(${tx.array(ownUnplaced)}::int8[])`]
      if (removed.length > 0) statements.push(tx`DELETE FROM snapshots WHERE tenant = ${tenant} AND seq = ANY(${tx.array(removed.map(String))}::int8[])`)
      for (const { seq, problem } of setAside) statements.push(tx`UPDATE snapshots SET corrupt = ${problem} WHERE tenant = ${tenant} AND seq = ${String(seq)}`)
      await Promise.all(statements)
    })
    this.dropListed(tenant, (seq) => removed.includes(seq) || setAside.some((aside) => aside.seq === seq))
    return logNeededAfter
  }

  async removeOlderThan(tenant: string, seq: number): Promise<void> {
    await this.host.fenced(tenant, (tx) => tx`DELETE FROM snapshots WHERE tenant = ${tenant} AND seq < ${String(seq)}`)
    this.dropListed(tenant, (listed) => listed < seq)
  }

  private dropListed(tenant: string, gone: (seq: number) => boolean): void {
    const prepared = this.host.preparedIfAny(tenant)
    if (prepared === undefined) return
    prepared.snapshots = prepared.snapshots.filter((listed) => !gone(listed.seq))
    for (const seq of prepared.loaded.keys()) if (gone(seq)) prepared.loaded.delete(seq)
  }

  /** The snapshot's check, remembered or made now (its parts read and hashed). */
  private async problemOf(tenant: string, seq: number): Promise<string | null> {
    const file = snapshotName(tenant, seq)
    const known = this.checked.get(file)
    if (known !== undefined) return known
    const problem = snapshotBytesProblem(await snapshotBytes(this.host.sql, tenant, seq), tenant, seq)
    this.noteChecked(file, problem)
    return problem
  }
}
