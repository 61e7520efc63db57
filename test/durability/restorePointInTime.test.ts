/*
 * Point-in-time restore and history through the operator CLI, offline: a
 * tenant with a snapshot under its writes is restored to the sequence
 * number between two known writes (the first present, the second absent),
 * then to a time between them, then forward again to the entries the first
 * restore left behind (they stay in the history). `history` lists the
 * snapshots, the log ranges and the reachable points; points outside the
 * history are refused with the reachable ones named.
 */
import t from 'tap'
import { runCli } from '../helpers/cli.js'
import { startInProcess, tempDataDir, type InProcessServer } from '../helpers/server.js'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const dataDir = tempDataDir('pitr')

async function projectNames(server: InProcessServer, token: string): Promise<string[]> {
  const list = await server.client.request('GET', '/v1/time/projects', { tenant: 'acme', query: { token, $orderby: 'name' } })
  if (list.status !== 200) throw new Error(`list failed: ${list.status} ${list.text}`)
  return (list.json as { name: string }[]).map((project) => project.name)
}

async function addProject(server: InProcessServer, token: string, name: string): Promise<number> {
  const created = await server.client.request('POST', '/v1/time/projects', { tenant: 'acme', query: { token }, body: { name } })
  if (created.status !== 201) throw new Error(`create failed: ${created.status} ${created.text}`)
  return server.service.services.registry.get('acme')?.state.seq ?? 0
}

// Before: tenant and 'zero', then a clean stop (a snapshot under the writes that follow).
let server = await startInProcess(dataDir)
const { token } = await server.client.createTenant('acme')
await addProject(server, token, 'zero')
await server.stop()
server = await startInProcess(dataDir)
const firstSeq = await addProject(server, token, 'first')
await sleep(30)
const between = new Date()
await sleep(30)
const secondSeq = await addProject(server, token, 'second')
await server.stop()

t.test('history lists the snapshots, the log and the reachable points', async (t) => {
  const history = await runCli(dataDir, ['history', 'acme'])
  t.equal(history.code, 0, history.stderr)
  t.match(history.stdout, /snapshots \(newest first\):\n {2}seq \d+ /)
  t.match(history.stdout, new RegExp(`log ranges:\\n {2}seq 1\\.\\.${secondSeq} \\(`), 'the whole log is kept within the retention')
  t.match(history.stdout, new RegExp(`reachable restore points \\(restore --to-seq / --to-time\\):\\n {2}seq 1\\.\\.${secondSeq} `))
  const unknown = await runCli(dataDir, ['history', 'nobody'])
  t.equal(unknown.code, 1)
  t.match(unknown.stderr, /no tenant 'nobody'/)
})

t.test('restore --to-seq between two writes: the first is there, the second is not', async (t) => {
  t.ok(secondSeq > firstSeq)
  const restored = await runCli(dataDir, ['restore', 'acme', '--to-seq', String(firstSeq)])
  t.equal(restored.code, 0, restored.stderr)
  t.match(restored.stdout, new RegExp(`acme: restored \\d+ objects from seq ${firstSeq}, written .*\\(snapshot seq \\d+ \\+ \\d+ log entries\\); it is now snapshot seq ${secondSeq + 1}`))
  t.match(restored.stdout, new RegExp(`entries ${firstSeq + 1}\\.\\.${secondSeq}, written after the restored point, are no longer part of the current state`))
  t.match(restored.stdout, `the next write gets seq ${secondSeq + 2}`)
  const after = await startInProcess(dataDir)
  const token = await after.client.login('acme', 'owner@acme.test', 'secret-password') // a restore ends every session
  t.same(await projectNames(after, token), ['first', 'zero'])
  await addProject(after, token, 'third')
  await after.stop()
})

t.test('restore --to-time picks the last entry at or before the time', async (t) => {
  const restored = await runCli(dataDir, ['restore', 'acme', '--to-time', between.toISOString()])
  t.equal(restored.code, 0, restored.stderr)
  t.match(restored.stdout, `from seq ${firstSeq}, written`)
  const after = await startInProcess(dataDir)
  const token = await after.client.login('acme', 'owner@acme.test', 'secret-password') // a restore ends every session
  t.same(await projectNames(after, token), ['first', 'zero'], "'second' and the later 'third' are absent")
  await after.stop()
})

t.test('entries left behind by a restore stay reachable', async (t) => {
  const history = await runCli(dataDir, ['history', 'acme'])
  t.match(history.stdout, new RegExp(`seq 1\\.\\.${secondSeq} \\(`), 'the old line is still listed')
  const restored = await runCli(dataDir, ['restore', 'acme', '--to-seq', String(secondSeq)])
  t.equal(restored.code, 0, restored.stderr)
  const after = await startInProcess(dataDir)
  const token = await after.client.login('acme', 'owner@acme.test', 'secret-password') // a restore ends every session
  t.same(await projectNames(after, token), ['first', 'second', 'zero'])
  await after.stop()
})

t.test('points outside the history are refused with what is reachable', async (t) => {
  const tooLate = await runCli(dataDir, ['restore', 'acme', '--to-seq', '999999'])
  t.equal(tooLate.code, 1)
  t.match(tooLate.stderr, /tenant 'acme': seq 999999 cannot be restored; reachable: seq 1\.\./)
  const tooEarly = await runCli(dataDir, ['restore', 'acme', '--to-time', '2001-01-01T00:00:00Z'])
  t.equal(tooEarly.code, 1)
  t.match(tooEarly.stderr, /nothing reachable at or before 2001-01-01T00:00:00\.000Z; reachable: seq 1\.\./)
  const badTime = await runCli(dataDir, ['restore', 'acme', '--to-time', 'yesterday'])
  t.match(badTime.stderr, /--to-time needs an ISO 8601 time/)
  const two = await runCli(dataDir, ['restore', 'acme', '--to-seq', '3', '--to-time', between.toISOString()])
  t.match(two.stderr, /name exactly one of/)
})
