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
import { headerOf, headerPart } from '../snapshotHeader.js'
import { pruneSnapshotSet } from '../snapshotPruning.js'
import { retryingLostConnection, type Sql, type TxSql } from './connection.js'
import { heldSnapshotSteps, readHeldSnapshot } from './heldSnapshot.js'
import { parseSnapshotName, snapshotListing, snapshotName, type PreparedTenant, type StoredSnapshot } from './preparedTenant.js'
import { uploadSnapshot, type UploadedSnapshot } from './snapshotUpload.js'

/** Past this many remembered checks the memory starts over. */
const MAX_CHECKED = 10_000
/** Unplaced snapshots numbered per millisecond: their negative seq is -(ms × this + a counter). */
const UNPLACED_PER_MS = 1000
let unplacedWritten = 0

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
    const held = prepared.loaded.get(seq)
    if (held === undefined) throw new Error(`snapshot ${file} was not loaded: prepare loads the newest good one (prepare the tenant again, with uptoSeq for an older one)`)
    return yield* heldSnapshotSteps(held)
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

  /** Stores the snapshot unplaced as it is made (snapshotUpload.ts) and places it at `seq` (see the top). */
  async write(tenant: string, seq: number, at: number, body: SnapshotSource, onProgress?: (recordsDone: number) => void): Promise<{ file: string; bytes: number }> {
    const unplaced = await this.writeUnplaced(tenant, at, body, onProgress)
    return unplaced.place(seq)
  }

  /**
   * Stores the snapshot as it is made (a slice per turn, a part at a time: snapshotUpload.ts) at a negative seq, which
   * no listing takes (see the top); `place` moves its parts to their sequence number in one transaction fenced by the
   * lease, which writes no part but the first (its header names the sequence number).
   */
  async writeUnplaced(tenant: string, at: number, body: SnapshotSource, onProgress?: (recordsDone: number) => void): Promise<UnplacedSnapshot> {
    unplacedWritten = (unplacedWritten + 1) % UNPLACED_PER_MS
    const unplacedSeq = -(Date.now() * UNPLACED_PER_MS + unplacedWritten)
    const key = `${tenant}/${unplacedSeq}`
    this.unplaced.add(key)
    let uploaded: UploadedSnapshot
    try {
      uploaded = await uploadSnapshot(this.host.sql, tenant, unplacedSeq, at, body, onProgress)
    } catch (error) {
      this.unplaced.delete(key)
      throw error
    }
    const { format, bodyBytes, sha256, parts, totalBytes, firstPart } = uploaded
    /** Removes the unplaced rows; without the lease, as they are no snapshot any listing takes (see the top). */
    const removeUnplaced = () => retryingLostConnection(() => this.host.sql`DELETE FROM snapshots WHERE tenant = ${tenant} AND seq = ${String(unplacedSeq)}`)
    let settled = false
    return {
      place: async (seq) => {
        assert(!settled, 'an unplaced snapshot is placed or discarded once')
        settled = true
        // The header's room does not depend on the sequence number (snapshotHeader.ts): the body stays where it is.
        headerPart(headerOf(tenant, seq, at, bodyBytes, sha256)).copy(firstPart, 0)
        try {
          await this.host.fenced(tenant, async (tx) => {
            await tx`DELETE FROM snapshots WHERE tenant = ${tenant} AND seq = ${String(seq)}`
            await tx`INSERT INTO snapshots (tenant, seq, at, format, body_bytes, sha256, parts, total_bytes)
               VALUES (${tenant}, ${String(seq)}, ${String(at)}, ${format}, ${String(bodyBytes)}, ${sha256}, ${parts}, ${String(totalBytes)})`
            const moved = await tx`UPDATE snapshot_parts SET seq = ${String(seq)} WHERE tenant = ${tenant} AND seq = ${String(unplacedSeq)}`
            if (moved.count !== parts) throw new Error(`snapshot of tenant '${tenant}' to place at seq ${seq}: ${moved.count} of its ${parts} parts are stored`)
            await tx`UPDATE snapshot_parts SET bytes = ${firstPart} WHERE tenant = ${tenant} AND seq = ${String(seq)} AND part = 0`
            await tx`DELETE FROM snapshots WHERE tenant = ${tenant} AND seq = ${String(unplacedSeq)}`
          })
        } catch (error) {
          await removeUnplaced().catch(() => undefined)
          throw error
        } finally {
          this.unplaced.delete(key)
        }
        return this.listed(tenant, { seq, at, format, bodyBytes, sha256, totalBytes })
      },
      discard: async () => {
        if (settled) return
        settled = true
        this.unplaced.delete(key)
        await removeUnplaced()
      },
    }
  }

  /** The snapshot stored at `seq`, now listed (checked: its writer made it) in the prepared listing. */
  private listed(tenant: string, stored: StoredSnapshot): { file: string; bytes: number } {
    const file = snapshotName(tenant, stored.seq)
    this.noteChecked(file, null)
    const prepared = this.host.preparedIfAny(tenant)
    if (prepared !== undefined) prepared.snapshots = [stored, ...prepared.snapshots.filter((listed) => listed.seq !== stored.seq)].sort((a, b) => b.seq - a.seq)
    return { file, bytes: stored.totalBytes }
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
    const { problem } = await readHeldSnapshot(this.host.sql, tenant, seq)
    this.noteChecked(file, problem)
    return problem
  }
}
