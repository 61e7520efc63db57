/*
 * Which snapshots a tenant keeps (the newest, and those a point-in-time
 * restore within the window needs), and the log up to where no restore
 * needs it any more; the same rule for snapshot files and for rows
 * (cluster mode: pgSnapshots.ts).
 */
import fs from 'node:fs'
import path from 'node:path'
import { isAlive } from './dataDirLock.js'
import { SnapshotFaults } from './snapshotFaults.js'
import type { SnapshotListing } from './ports.js'
import { snapshotFileProblem } from './snapshotChecks.js'
import { listSnapshots, tenantSnapshotDir } from './snapshotFile.js'
import { readSnapshotHeader } from './snapshotHeader.js'

/**
 * Removes the snapshots no restore can need any more, and returns the sequence number up to which the log is
 * needed by no restore either (0: keep it all).
 *
 * Kept: the newest `kept`; the newest one taken at or before `windowStartMs` (the start of the point-in-time window,
 * LOG_RETENTION_MS ago), the base from which the log reaches every point of the window; and each snapshot of the
 * window that starts a log line (`startsLogLine`: a restore or import wrote it, no log entry has its sequence
 * number, so the entries after it can be reached from it alone). The log up to the oldest kept snapshot can go
 * only when that snapshot predates the window: otherwise the log from its first entry may be the only way to the
 * window's first points.
 *
 * Only snapshots that pass their checks count (snapshotFileProblem: header, length, checksum; each file checked
 * once): a corrupt file can restore nothing, so it takes no place among the newest `kept` and is not the base; a
 * good older one stays instead. A corrupt file met on the way is set aside as `<name>.corrupt` (no longer listed,
 * kept for the operator to look at) and reported to `faults`. Those that would go anyway are removed unchecked.
 *
 * Temporary files whose writer is gone (a process that stopped while writing a snapshot) go too: nothing will ever
 * rename them. Those of a running process (this server's writes under way, an operator command's) stay.
 */
export async function pruneSnapshots(
  dataDir: string,
  tenant: string,
  kept: number,
  windowStartMs: number,
  startsLogLine: (seq: number) => boolean,
  faults: SnapshotFaults = new SnapshotFaults(),
): Promise<number> {
  const snapshots = listSnapshots(dataDir, tenant).map((snapshot) => ({ ...snapshot, at: takenAt(snapshot.file) }))
  const logNeededAfter = await pruneSnapshotSet(snapshots, kept, windowStartMs, startsLogLine, {
    problemOf: (snapshot) => snapshotFileProblem(snapshot.file, tenant, snapshot.seq),
    remove: (snapshot) => fs.promises.rm(snapshot.file, { force: true }),
    setAside: async (snapshot, problem) => {
      faults.note(tenant, snapshot.file, problem, 'set aside')
      await fs.promises.rename(snapshot.file, `${snapshot.file}${CORRUPT_SUFFIX}`)
    },
  })
  for (const file of leftTemporaryFiles(tenantSnapshotDir(dataDir, tenant))) await fs.promises.rm(file, { force: true })
  return logNeededAfter
}

/** A listed snapshot with when it was taken (from its header), or why its header cannot be read. */
export type TimedSnapshot = SnapshotListing & { at: number | { problem: string } }

/**
 * pruneSnapshots' rule over a tenant's snapshots, newest first, whatever holds them (files; rows in cluster mode):
 * `problemOf` checks one in full (null: good), `remove` drops one no restore needs, `setAside` one that is corrupt.
 * Answers the sequence number up to which the log is needed by no restore (0: keep it all).
 */
export async function pruneSnapshotSet<S extends TimedSnapshot>(
  snapshots: readonly S[],
  kept: number,
  windowStartMs: number,
  startsLogLine: (seq: number) => boolean,
  actions: { problemOf(snapshot: S): Promise<string | null>; remove(snapshot: S): Promise<unknown>; setAside(snapshot: S, problem: string): Promise<unknown> },
): Promise<number> {
  const keep: { seq: number; at: number }[] = []
  let base: { seq: number; at: number } | undefined
  for (const snapshot of snapshots) {
    const at = snapshot.at
    const isBase = typeof at === 'number' && at <= windowStartMs && base === undefined
    const wanted = typeof at !== 'number' || keep.length < kept || isBase || (at > windowStartMs && startsLogLine(snapshot.seq))
    if (!wanted) {
      await actions.remove(snapshot)
      continue
    }
    const problem = typeof at === 'number' ? await actions.problemOf(snapshot) : at.problem
    if (problem !== null || typeof at !== 'number') {
      await actions.setAside(snapshot, problem ?? 'unreadable header')
      continue
    }
    const good = { seq: snapshot.seq, at }
    if (isBase) base = good
    keep.push(good)
  }
  const oldest = keep.at(-1)
  return oldest !== undefined && oldest.at <= windowStartMs ? oldest.seq : 0
}

/** What a corrupt snapshot file is renamed to by pruning (listSnapshots no longer lists it). */
const CORRUPT_SUFFIX = '.corrupt'

/** The temporary files of snapshot writes (snapshotFile.ts: of a sequence number, or unplaced; named after the writer's pid) in `dir` whose writer is gone. */
function leftTemporaryFiles(dir: string): string[] {
  if (!fs.existsSync(dir)) return []
  return fs
    .readdirSync(dir)
    .filter((name) => {
      const writer = /^(?:\d{16}|unplaced-\d+)\.tlsnap\.tmp-(\d+)$/.exec(name)?.[1]
      return writer !== undefined && !isAlive(Number(writer))
    })
    .map((name) => path.join(dir, name))
}

/** When the snapshot was taken, from its header; why not when the header cannot be read. */
function takenAt(file: string): number | { problem: string } {
  try {
    return readSnapshotHeader(file).at
  } catch (error) {
    return { problem: error instanceof Error ? error.message : String(error) }
  }
}
