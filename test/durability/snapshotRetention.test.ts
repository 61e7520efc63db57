/*
 * Which snapshots stay so that every point of the retention window can be
 * restored: the newest SNAPSHOTS_KEPT, the newest one taken at or before the
 * window's start (the base the window's log replays from), and each snapshot
 * in the window that starts a log line (written by a restore or an import).
 * The answer also says up to where the log is no longer needed, and
 * temporary files left by a process that stopped while writing go. Only
 * snapshots that pass their checks count: a corrupt one is set aside and
 * reported, and a good older one is kept in its place.
 *
 * End to end, with LOG_RETENTION_MS of 3 s: a server writes, snapshots,
 * waits past the window, writes and snapshots again; then `history` and
 * `restore` (the CLI, offline) find the points before the base snapshot
 * gone and refuse them naming the reachable range, while every point from
 * the base on still restores.
 */
import t from 'tap'
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { listSnapshots, snapshotFileName, tenantSnapshotDir, writeSnapshotInSlices } from '../../src/persist/snapshotFile.js'
import { pruneSnapshots } from '../../src/persist/snapshotPruning.js'
import { runCli } from '../helpers/cli.js'
import { SnapshotFaults } from '../../src/persist/snapshotFaults.js'
import { startInProcess, tempDataDir, type InProcessServer } from '../helpers/server.js'

/** Snapshots at seq 10..50 taken at 100..500 ms; seq 30 starts a log line. */
async function fiveSnapshots(collections: Record<string, unknown[]> = {}): Promise<string> {
  const dataDir = tempDataDir('retention')
  for (const seq of [10, 20, 30, 40, 50]) {
    await writeSnapshotInSlices(tenantSnapshotDir(dataDir, 'acme'), 'acme', seq, seq * 10, { collections })
  }
  return dataDir
}

const startsLogLine = (seq: number) => seq === 30
const SOME_RECORDS = {
  Project: [
    { id: 'p1', name: 'one' },
    { id: 'p2', name: 'two' },
  ],
}
const kept = (dataDir: string) => listSnapshots(dataDir, 'acme').map((listing) => listing.seq)

t.test('window in the middle: newest two, the base before the window, the line start inside it', async (t) => {
  const dataDir = await fiveSnapshots()
  const logNotNeededUpto = await pruneSnapshots(dataDir, 'acme', 2, 250, startsLogLine)
  t.same(kept(dataDir), [50, 40, 30, 20])
  t.equal(logNotNeededUpto, 20, 'the log up to the base can go')
})

t.test('a corrupt snapshot takes no place among the newest kept: a good older one stays, the corrupt one is set aside', async (t) => {
  const dataDir = await fiveSnapshots(SOME_RECORDS)
  const newest = path.join(tenantSnapshotDir(dataDir, 'acme'), snapshotFileName(50))
  const bytes = fs.readFileSync(newest)
  bytes[bytes.length - 1] = (bytes[bytes.length - 1] as number) ^ 0xff
  fs.writeFileSync(newest, bytes)
  const torn = path.join(tenantSnapshotDir(dataDir, 'acme'), snapshotFileName(30))
  fs.writeFileSync(torn, fs.readFileSync(torn).subarray(0, 10))
  const faults = new SnapshotFaults()
  const logNotNeededUpto = await pruneSnapshots(dataDir, 'acme', 2, 1000, () => false, faults)
  t.same(kept(dataDir), [40, 20], 'the two newest good ones')
  t.equal(logNotNeededUpto, 20)
  t.ok(fs.existsSync(`${newest}.corrupt`) && fs.existsSync(`${torn}.corrupt`), 'both corrupt files are set aside')
  t.equal(faults.count, 2, 'and reported')
  t.equal(await pruneSnapshots(dataDir, 'acme', 2, 1000, () => false, faults), 20, 'a second prune finds the same')
  t.same(kept(dataDir), [40, 20])
  t.equal(faults.count, 2)
})

t.test('the base before the window is a good snapshot', async (t) => {
  const dataDir = await fiveSnapshots()
  const base = path.join(tenantSnapshotDir(dataDir, 'acme'), snapshotFileName(20))
  fs.writeFileSync(base, Buffer.concat([fs.readFileSync(base), Buffer.from('trailing')]))
  t.equal(await pruneSnapshots(dataDir, 'acme', 2, 250, startsLogLine, new SnapshotFaults()), 10, 'the base is the next good one before the window')
  t.same(kept(dataDir), [50, 40, 30, 10])
})

t.test("temporary files of a process that is gone are removed; a running process's stay", async (t) => {
  const dataDir = await fiveSnapshots()
  const dir = tenantSnapshotDir(dataDir, 'acme')
  const gone = spawnSync(process.execPath, ['-e', '']).pid
  const left = path.join(dir, `${snapshotFileName(60)}.tmp-${gone}`)
  const own = path.join(dir, `${snapshotFileName(70)}.tmp-${process.pid}`)
  const parents = path.join(dir, `${snapshotFileName(80)}.tmp-${process.ppid}`)
  const unrelated = path.join(dir, 'notes.txt')
  for (const file of [left, own, parents, unrelated]) fs.writeFileSync(file, 'partial')
  await pruneSnapshots(dataDir, 'acme', 5, 0, startsLogLine)
  t.notOk(fs.existsSync(left), 'a partial snapshot of a process that is gone goes')
  t.ok(fs.existsSync(own), 'a write of this process under way stays')
  t.ok(fs.existsSync(parents), 'and one of another running process')
  t.ok(fs.existsSync(unrelated), 'other files stay')
  t.same(kept(dataDir), [50, 40, 30, 20, 10])
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

t.test('points older than LOG_RETENTION_MS become unreachable; the window stays reachable', async (t) => {
  const retention = { LOG_RETENTION_MS: '3000', SNAPSHOTS_KEPT: '1' }
  const dataDir = tempDataDir('retention-e2e')
  const server = await startInProcess(dataDir, retention)
  const { token, email, password } = await server.client.createTenant('acme')
  const add = async (target: InProcessServer, name: string): Promise<number> => {
    const created = await target.client.request('POST', '/v1/time/projects', { tenant: 'acme', query: { token }, body: { name } })
    if (created.status !== 201) throw new Error(`create failed: ${created.status} ${created.text}`)
    return target.service.services.registry.get('acme')?.state.seq ?? 0
  }
  const actor = () => {
    const found = server.service.services.registry.get('acme')
    if (found === undefined) throw new Error('acme is not active')
    return found
  }
  const createdAt = new Date()
  const baseSeq = await add(server, 'old')
  t.equal((await actor().snapshot()).seq, baseSeq, 'the base snapshot')
  await new Promise((resolve) => setTimeout(resolve, 3300))
  const insideSeq = await add(server, 'new1')
  const lastSeq = await add(server, 'new2')
  await actor().snapshot()
  await server.stop()

  const history = await runCli(dataDir, ['history', 'acme'], retention)
  t.equal(history.code, 0, history.stderr)
  t.match(history.stdout, new RegExp(`log ranges:\\n {2}seq ${baseSeq + 1}\\.\\.${lastSeq} \\(`), `the log up to the base (seq ${baseSeq}) was pruned`)
  t.match(history.stdout, new RegExp(`reachable restore points [^\\n]*\\n {2}seq ${baseSeq}\\.\\.${lastSeq} \\(`), 'reachable from the base on')
  t.notMatch(history.stdout, /\n {2}seq 1\.\./, 'nothing from seq 1 any more')

  for (const seq of [1, baseSeq - 1]) {
    const refused = await runCli(dataDir, ['restore', 'acme', '--to-seq', String(seq)], retention)
    t.equal(refused.code, 1, `seq ${seq} is refused`)
    t.match(refused.stderr, new RegExp(`seq ${seq} cannot be restored; reachable: seq ${baseSeq}\\.\\.${lastSeq} `))
  }
  const tooEarly = await runCli(dataDir, ['restore', 'acme', '--to-time', createdAt.toISOString()], retention)
  t.equal(tooEarly.code, 1)
  t.match(tooEarly.stderr, new RegExp(`nothing reachable at or before .*; reachable: seq ${baseSeq}\\.\\.${lastSeq} `), 'a time before the window is refused too')

  // Offline restores prune nothing (only a running tenant's snapshots do), so both points are still there in turn.
  const base = await runCli(dataDir, ['restore', 'acme', '--to-seq', String(baseSeq)], retention)
  t.equal(base.code, 0, base.stderr)
  t.match(base.stdout, new RegExp(`from seq ${baseSeq} \\(snapshot seq ${baseSeq} \\+ 0 log entries\\)`), 'the base itself restores from its snapshot (its log entry is gone)')
  const inside = await runCli(dataDir, ['restore', 'acme', '--to-seq', String(insideSeq)], retention)
  t.equal(inside.code, 0, inside.stderr)
  t.match(inside.stdout, new RegExp(`from seq ${insideSeq}, written .*\\(snapshot seq ${baseSeq} \\+ 1 log entries\\)`), 'a point inside the window: the base plus the log')
  const after = await startInProcess(dataDir, retention)
  t.teardown(() => after.stop())
  // A restore ends every session: the token from before it is refused, a new login works.
  const stale = await after.client.request('GET', '/v1/time/projects', { tenant: 'acme', query: { token } })
  t.equal(stale.status, 401, 'the token from before the restore is ended')
  const fresh = await after.client.login('acme', email, password)
  const list = await after.client.request('GET', '/v1/time/projects', { tenant: 'acme', query: { token: fresh, $orderby: 'name' } })
  t.same(Array.isArray(list.json) ? (list.json as { name: string }[]).map((project) => project.name) : list.text, ['new1', 'old'], 'the tenant as it was at that point')
})
