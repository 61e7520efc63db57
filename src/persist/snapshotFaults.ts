/*
 * Corrupt snapshot files, made visible. A snapshot that fails its checks is
 * never used: recovery skips it for an older one (tenants/recovery.ts) and pruning
 * sets it aside (snapshotFile.ts, pruneSnapshots). Either way the operator
 * hears of it: one line on stderr naming the tenant, the file and the
 * reason, each time, and a count of the distinct files found since start,
 * which /metrics shows (timeledger_snapshots_corrupt_total). The store
 * keeps one per data directory, so the count is the server's.
 */

/** Distinct files remembered for the count; past it the memory starts over (the count goes on). */
const MAX_REMEMBERED_FILES = 10_000

export class SnapshotFaults {
  /** Distinct corrupt files found since start. */
  count = 0
  private readonly seen = new Set<string>()

  /** Logs the file (what was done with it, and why) and counts it once. */
  note(tenant: string, file: string, reason: string, outcome: 'skipped' | 'set aside'): void {
    console.error(`tenant '${tenant}': corrupt snapshot ${file} ${outcome}: ${reason}`)
    if (this.seen.has(file)) return
    if (this.seen.size >= MAX_REMEMBERED_FILES) this.seen.clear()
    this.seen.add(file)
    this.count += 1
  }
}
