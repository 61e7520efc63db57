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
 * read again to be checked: rows are never changed once written.
 */
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
    const unplaced = await this.writeUnplaced(tenant, at, body, onProgress)
    return unplaced.place(seq)
  }

  /** The bytes are encoded now (a slice per turn) and kept in memory; `place` puts the header of its sequence number in front and stores them. */
  async writeUnplaced(tenant: string, at: number, body: SnapshotSource, onProgress?: (recordsDone: number) => void): Promise<UnplacedSnapshot> {
    const bytes = await encodeSnapshotInSlices(tenant, 0, at, body, onProgress)
    const { bodyBytes, sha256 } = snapshotHeaderOf(bytes)
    return {
      place: (seq) => {
        // The header's room does not depend on the sequence number (snapshotHeader.ts): the body stays where it is.
        headerPart(headerOf(tenant, seq, at, bodyBytes, sha256)).copy(bytes, 0)
        return this.store(tenant, seq, at, bytes)
      },
      discard: async () => undefined,
    }
  }

  private async store(tenant: string, seq: number, at: number, bytes: Buffer): Promise<{ file: string; bytes: number }> {
    const header = snapshotHeaderOf(bytes)
    const parts = Math.max(1, Math.ceil(bytes.length / PART_BYTES))
    const stored: StoredSnapshot = { seq, at, format: header.format, bodyBytes: header.bodyBytes, sha256: header.sha256, totalBytes: bytes.length }
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
    if (removed.length === 0 && setAside.length === 0) return logNeededAfter
    await this.host.fenced(tenant, async (tx) => {
      const statements: Promise<unknown>[] = []
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
