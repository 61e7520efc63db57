/*
 * Room in the LMDB environment, and the ceiling that makes it "full".
 *
 * lmdb-js grows its memory map by itself when a transaction needs pages past
 * the end (its own change to LMDB's page allocator), so MDB_MAP_FULL never
 * reaches us: with a 2 MiB map it simply grew the file to 10 MiB. The
 * ceiling is therefore kept here: LMDB_MAP_SIZE_BYTES is the most the
 * environment may hold, and a write that arrives while the pages in use
 * reach it is refused (503 TL01-9011) before it is decided, so nothing is
 * applied that the log could not take.
 *
 * Pages in use = the pages of every named database (branch, leaf and
 * overflow pages), of the main database that names them and of LMDB's own
 * free-page list, plus the two meta pages. Pages freed by removing entries
 * (a pruned log) are no longer in use and are reused by later commits, so
 * the count falls as soon as space is freed and writes resume at once,
 * without a restart. The count is read from LMDB at most every
 * MEASURE_EVERY_MS; bytes appended in between (log entries, uploaded
 * files) are added as an estimate. An upload is checked before it is
 * accepted (hasRoomFor): its bytes must fit under the ceiling too.
 */
import type { RootDatabase } from 'lmdb'

const MEASURE_EVERY_MS = 200
const META_PAGES = 2
/** The header LMDB puts in front of a value kept in overflow pages. */
const PAGE_HEADER_BYTES = 16

interface PageStats {
  pageSize?: number
  treeBranchPageCount?: number
  treeLeafPageCount?: number
  overflowPages?: number
  free?: PageStats
}

function pagesOf(stats: PageStats | undefined): number {
  if (stats === undefined) return 0
  return (stats.treeBranchPageCount ?? 0) + (stats.treeLeafPageCount ?? 0) + (stats.overflowPages ?? 0)
}

export class StoreSpace {
  private measuredBytes = 0
  private measuredAtMs = Number.NEGATIVE_INFINITY
  private writtenSinceMeasureBytes = 0
  private pageBytes = 4096

  constructor(
    private readonly root: RootDatabase,
    private readonly databases: readonly { getStats(): unknown }[],
    /** The ceiling; 0: none. */
    readonly limitBytes: number,
  ) {}

  /** Bytes of the pages in use now, read from LMDB. */
  measure(): number {
    const rootStats = this.root.getStats() as PageStats
    let pages = META_PAGES + pagesOf(rootStats) + pagesOf(rootStats.free)
    for (const database of this.databases) pages += pagesOf(database.getStats() as PageStats)
    this.pageBytes = rootStats.pageSize ?? this.pageBytes
    this.measuredBytes = pages * this.pageBytes
    this.measuredAtMs = performance.now()
    this.writtenSinceMeasureBytes = 0
    return this.measuredBytes
  }

  /** The pages in use as last measured plus what was written since (an estimate that errs high). */
  usedBytes(): number {
    if (performance.now() - this.measuredAtMs >= MEASURE_EVERY_MS) this.measure()
    return this.measuredBytes + this.writtenSinceMeasureBytes
  }

  noteWritten(bytes: number): void {
    this.writtenSinceMeasureBytes += bytes
  }

  /**
   * Whether `bytes` more (an uploaded file's) fit under the ceiling now, counted in whole pages as LMDB stores a
   * large value (overflow pages, with a page header).
   */
  hasRoomFor(bytes: number): boolean {
    if (this.limitBytes === 0) return true
    const needed = Math.ceil((bytes + PAGE_HEADER_BYTES) / this.pageBytes) * this.pageBytes
    if (this.usedBytes() + needed <= this.limitBytes) return true
    // The estimate says no room: make sure with a fresh count before refusing.
    return this.writtenSinceMeasureBytes !== 0 && this.measure() + needed <= this.limitBytes
  }

  /** True while the environment holds the ceiling or more: writes are refused. */
  isFull(): boolean {
    if (this.limitBytes === 0) return false
    if (this.usedBytes() < this.limitBytes) return false
    // The estimate says full: make sure with a fresh count before refusing.
    return this.writtenSinceMeasureBytes === 0 || this.measure() >= this.limitBytes
  }
}
