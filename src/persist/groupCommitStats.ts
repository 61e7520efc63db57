/*
 * Group-commit figures for /metrics: how many log entries each LMDB commit
 * carried, and how long a commit took from its first entry being queued to
 * being flushed to disk. lmdb-js hands every put of one transaction the
 * same commit promise, so a new promise marks a new commit; the counting
 * per append is one comparison and one addition.
 */
import { Histogram, LATENCY_BUCKETS_SECONDS } from '../observability/histogram.js'

const COMMIT_SIZE_BUCKETS: readonly number[] = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]

interface OpenCommit {
  readonly committed: Promise<unknown>
  readonly startedMs: number
  entries: number
}

export class GroupCommitStats {
  readonly entriesPerCommit = new Histogram(COMMIT_SIZE_BUCKETS)
  readonly flushSeconds = new Histogram(LATENCY_BUCKETS_SECONDS)
  private current: OpenCommit | null = null

  /** Counts one appended entry; `committed` is the put's promise, `flushed` its commit's flush. */
  noteAppend(committed: Promise<unknown>, flushed: Promise<unknown>): void {
    const open = this.current
    if (open !== null && open.committed === committed) {
      open.entries += 1
      return
    }
    const commit: OpenCommit = { committed, startedMs: performance.now(), entries: 1 }
    this.current = commit
    flushed.then(
      () => {
        this.entriesPerCommit.observe(commit.entries)
        this.flushSeconds.observe((performance.now() - commit.startedMs) / 1000)
        if (this.current === commit) this.current = null
      },
      () => {
        if (this.current === commit) this.current = null
      },
    )
  }
}
