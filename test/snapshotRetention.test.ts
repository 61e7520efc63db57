/*
 * Which snapshots stay so that every point of the retention window can be
 * restored: the newest SNAPSHOTS_KEPT, the newest one taken at or before the
 * window's start (the base the window's log replays from), and each snapshot
 * in the window that starts a log line (written by a restore or an import).
 * The answer also says up to where the log is no longer needed.
 */
import t from 'tap'
import { encodeSnapshot, listSnapshots, pruneSnapshots, tenantSnapshotDir, writeSnapshotFile } from '../src/persist/snapshotFile.js'
import { tempDataDir } from './helpers/server.js'

/** Snapshots at seq 10..50 taken at 100..500 ms; seq 30 starts a log line. */
async function fiveSnapshots(): Promise<string> {
  const dataDir = tempDataDir('retention')
  for (const seq of [10, 20, 30, 40, 50]) {
    await writeSnapshotFile(tenantSnapshotDir(dataDir, 'acme'), seq, encodeSnapshot('acme', seq, seq * 10, { collections: {} }))
  }
  return dataDir
}

const startsLogLine = (seq: number) => seq === 30
const kept = (dataDir: string) => listSnapshots(dataDir, 'acme').map((listing) => listing.seq)

t.test('window in the middle: newest two, the base before the window, the line start inside it', async (t) => {
  const dataDir = await fiveSnapshots()
  const logNotNeededUpto = await pruneSnapshots(dataDir, 'acme', 2, 250, startsLogLine)
  t.same(kept(dataDir), [50, 40, 30, 20])
  t.equal(logNotNeededUpto, 20, 'the log up to the base can go')
})

t.test('no snapshot before the window: the whole log is still needed', async (t) => {
  const dataDir = await fiveSnapshots()
  t.equal(await pruneSnapshots(dataDir, 'acme', 2, 50, startsLogLine), 0)
  t.same(kept(dataDir), [50, 40, 30])
})

t.test('an empty window (retention 0) keeps only the newest ones', async (t) => {
  const dataDir = await fiveSnapshots()
  t.equal(await pruneSnapshots(dataDir, 'acme', 2, 1000, startsLogLine), 40)
  t.same(kept(dataDir), [50, 40])
})
