/*
 * The operator's view of a tenant's log (src/logReport.ts through the CLI,
 * `node dist/src/cli.js`, while the server runs): `history <tenant>
 * --entries [--from --to]` lists each entry with its time, who made it and
 * what it changed; `restore <tenant> --to-seq|--to-time … --dry-run` says
 * what the restore would undo per resource (created, changed, removed
 * since) and changes nothing.
 */
import t from 'tap'
import { runCli } from '../helpers/cli.js'
import { spawnServer, stopGracefully, tempDataDir } from '../helpers/server.js'

const dataDir = tempDataDir('cli-history')
const server = await spawnServer(dataDir)
t.teardown(() => stopGracefully(server))
const { client } = server
const { token } = await client.createTenant('past')
const call = (method: string, path: string, body?: unknown) => client.request(method, `/v1/${path}`, { tenant: 'past', query: { token }, body })
const ownerId = ((await call('GET', 'users/@self')).json as { id: string }).id

const created = async (path: string, body: unknown): Promise<string> => {
  const answer = await call('POST', path, body)
  if (answer.status !== 201) throw new Error(`${path}: ${answer.status} ${answer.text}`)
  return (answer.json as { id: string }).id
}
const project = await created('time/projects', { name: 'Relaunch' })
const kept = await created('time/clients', { name: 'Kept' })
const doomed = await created('time/clients', { name: 'Doomed' })
const renamed = await client.request('PATCH', `/v1/time/projects/${project}`, {
  tenant: 'past',
  query: { token },
  rawBody: JSON.stringify({ name: 'Relaunch 2', version: 1 }),
  headers: { 'content-type': 'application/merge-patch+json' },
})
if (renamed.status !== 200) throw new Error(`PATCH: ${renamed.status} ${renamed.text}`)

t.test('history --entries: each entry, its time, its user, what it changed', async (t) => {
  const listed = await runCli(dataDir, ['history', 'past', '--entries'])
  t.equal(listed.code, 0, listed.stderr)
  const lines = listed.stdout.trim().split('\n')
  const update = lines.find((line) => line.includes(`updated Project ${project}`))
  t.match(update, new RegExp(`^\\d+  \\d{4}-\\d{2}-\\d{2}T[0-9:.]+Z  user ${ownerId}  updated Project ${project} \\(name\\)$`), 'an update names its fields')
  t.ok(lines.some((line) => line.includes(`created Client ${kept}`)))
  const seq = Number(update?.split(' ')[0])
  const bounded = await runCli(dataDir, ['history', 'past', '--entries', '--from', String(seq), '--to', String(seq)])
  t.same(bounded.stdout.trim().split('\n'), [update], '--from and --to by sequence number, both included')
  const byTime = await runCli(dataDir, ['history', 'past', '--entries', '--from', '2999-01-01T00:00:00Z'])
  t.equal(byTime.stdout, '', 'nothing after a time in the future')
  const bad = await runCli(dataDir, ['history', 'past', '--entries', '--from', 'yesterday'])
  t.equal(bad.code, 2)
  t.match(bad.stderr, /--from needs a sequence number or an ISO 8601 time/)
  const without = await runCli(dataDir, ['history', 'past', '--from', '1'])
  t.equal(without.code, 2)
  t.match(without.stderr, /--from goes with --entries/)
})

t.test('restore --dry-run: what a restore to that point would undo, per resource; nothing changes', async (t) => {
  const listed = await runCli(dataDir, ['history', 'past', '--entries'])
  const point = Number(
    listed.stdout
      .trim()
      .split('\n')
      .find((line) => line.includes(`updated Project ${project}`))
      ?.split(' ')[0],
  )
  // After the point: a new tag, the project changed again, a client moved to the trash, another removed for good.
  const tag = await created('time/tags', { name: 'late', color: '#000000' })
  t.equal((await call('PUT', `time/projects/${project}`, { name: 'Relaunch 3', version: 2 })).status, 200)
  t.equal((await call('DELETE', `time/clients/${kept}`)).status, 200)
  t.equal((await call('DELETE', `time/clients/${doomed}`, undefined)).status, 200)
  const trash = ((await call('GET', `time/clients/${doomed}/@deleted`)).json as { trashItem: { id: string } }).trashItem.id
  t.equal((await call('DELETE', `trash/${trash}`)).status, 200)
  const throwaway = await created('time/tags', { name: 'gone again', color: '#000000' })
  t.equal((await call('DELETE', `time/tags/${throwaway}`, undefined)).status, 200)
  const throwawayTrash = ((await call('GET', `time/tags/${throwaway}/@deleted`)).json as { trashItem: { id: string } }).trashItem.id
  t.equal((await call('DELETE', `trash/${throwawayTrash}`)).status, 200)

  const dry = await runCli(dataDir, ['restore', 'past', '--to-seq', String(point), '--dry-run'])
  t.equal(dry.code, 0, dry.stderr)
  t.match(dry.stdout, new RegExp(`^restore of 'past' to seq ${point} \\(dry run; nothing changed\\): would undo \\d+ log entries after it`))
  t.match(dry.stdout, /\n {2}Tag: 1 created since \(would go\), 0 changed \(would be as before\), 0 removed \(would come back\)/, 'the tag made and removed again is not counted')
  t.match(dry.stdout, /\n {2}Project: 0 created since \(would go\), 1 changed \(would be as before\), 0 removed/)
  t.match(dry.stdout, /\n {2}Client: 0 created since \(would go\), 1 changed \(would be as before\), 1 removed \(would come back\)/)
  t.equal((await call('GET', `time/tags/${tag}`)).status, 200, 'nothing was restored')
  const byTime = await runCli(dataDir, ['restore', 'past', '--to-time', new Date(Date.now() + 60_000).toISOString(), '--dry-run'])
  t.match(byTime.stdout, /nothing to undo, it is the current state/)
  const fromFile = await runCli(dataDir, ['restore', 'past', '--from', 'some.tlsnap', '--dry-run'])
  t.equal(fromFile.code, 2)
  t.match(fromFile.stderr, /--dry-run goes with --to-seq or --to-time/)
})
