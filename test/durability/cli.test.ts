/*
 * The operator CLI as an operator runs it (`node dist/src/cli.js`, built by
 * `npx tsc -p .`):
 *  - `--help` of every command the CLI lists answers exit code 0 and that
 *    command's usage text;
 *  - `serve` stopped by SIGTERM drains, writes a snapshot that holds every
 *    acknowledged write (nothing is left to replay), shows it doing so on
 *    stderr, and exits 0; `tenants` says on stderr what it read.
 */
import fs from 'node:fs'
import t from 'tap'
import { loadConfig } from '../../src/config.js'
import { EmbeddedStorage } from '../../src/persist/embeddedStorage.js'
import { recoverTenant } from '../../src/tenants/recovery.js'
import { listSnapshots } from '../../src/persist/snapshotFile.js'
import { runCli } from '../helpers/cli.js'
import { spawnServer, stopGracefully, tempDataDir, testEnv } from '../helpers/server.js'

t.test('--help of every command', async (t) => {
  const dataDir = tempDataDir('cli-help')
  const overview = await runCli(dataDir, ['--help'])
  t.equal(overview.code, 0, 'timeledger --help exits 0')
  t.match(overview.stdout, /^usage: timeledger <command>/)
  const listing = (overview.stdout.split(/^commands:$/m)[1] ?? '').split('\n\n')[0] ?? ''
  const commands = [...listing.matchAll(/^ {2}(\S+) +\S/gm)].map((match) => match[1] as string)
  t.ok(commands.length >= 4, `the CLI lists its commands: ${commands.join(', ')}`)
  t.ok(commands.includes('serve') && commands.includes('restore'), 'serve and restore among them')
  const helps = await Promise.all(commands.map((command) => runCli(dataDir, [command, '--help'])))
  for (const [index, command] of commands.entries()) {
    const help = helps[index] as Awaited<ReturnType<typeof runCli>>
    t.equal(help.code, 0, `${command} --help exits 0`)
    t.match(help.stdout, new RegExp(`^usage: timeledger ${command}\\b`), `${command} --help shows its usage`)
    t.equal(help.stderr, '', `${command} --help writes nothing to stderr`)
  }
  const unknown = await runCli(dataDir, ['no-such-command'])
  t.not(unknown.code, 0, 'an unknown command fails')
  t.match(unknown.stderr, /unknown command 'no-such-command'/)
})

t.test('SIGTERM: drain, snapshot, exit 0', async (t) => {
  const dataDir = tempDataDir('cli-sigterm')
  const server = await spawnServer(dataDir)
  const { token } = await server.client.createTenant('term')
  const names: string[] = []
  for (let index = 0; index < 7; index += 1) {
    const created = await server.client.request('POST', '/v1/time/projects', { tenant: 'term', query: { token }, body: { name: `kept ${index}` } })
    t.equal(created.status, 201)
    names.push(`kept ${index}`)
  }
  const newestBefore = listSnapshots(dataDir, 'term')[0]?.seq ?? 0

  t.equal(await stopGracefully(server), 0, 'the server exits 0 on SIGTERM')
  t.match(server.output(), /SIGTERM: draining, snapshotting and stopping/)
  // The snapshots of a stop take seconds on a big tenant: their progress is shown (stderr), then the stop's end.
  t.match(server.output(), /\nsnapshot 1 tenant {2}\d+ records in \d+m?s\n/, 'the snapshots written at the stop are shown')
  t.match(server.output(), /\nstopped in \d+\.\d s\n/, 'and the end of the stop')
  const newest = listSnapshots(dataDir, 'term')[0]
  t.ok(newest !== undefined && newest.seq > newestBefore, `a snapshot was written at the stop (seq ${newest?.seq}, before ${newestBefore})`)

  const config = loadConfig(testEnv(dataDir))
  const store = EmbeddedStorage.open(config.dataDir, config.lmdbMapSizeBytes)
  const recovered = recoverTenant('term', store)
  t.equal(recovered.report.snapshotFile, newest?.file, 'recovery starts from that snapshot')
  t.equal(recovered.report.replayedEntries, 0, 'the snapshot holds every write: nothing to replay')
  t.equal(recovered.state.seq, newest?.seq)
  const projects = [...recovered.state.collection('Project').values()].map((rec) => rec.name as string).sort()
  t.same(projects, names, 'every acknowledged project is in the snapshot')
  await store.close()

  // Listing the tenants loads each (seconds for a big one): a last line on stderr says what was read; the table is stdout.
  const tenants = await runCli(dataDir, ['tenants'])
  t.equal(tenants.code, 0)
  t.match(tenants.stdout, /^tenant +objects +log entries +last seq +last snapshot *\nterm +\d+ /)
  t.match(tenants.stderr, /^read tenants {2}1 tenants in \d+m?s\n$/, 'tenants says what it read, on stderr')
})

t.test('SIGTERM with a tenant loaded from its snapshot and not written to since: nothing is snapshotted again', async (t) => {
  const dataDir = tempDataDir('cli-sigterm-unchanged')
  let server = await spawnServer(dataDir)
  const { token } = await server.client.createTenant('still')
  t.equal((await server.client.request('POST', '/v1/time/projects', { tenant: 'still', query: { token }, body: { name: 'kept' } })).status, 201)
  t.equal(await stopGracefully(server), 0)
  const written = listSnapshots(dataDir, 'still')
  const inode = (file: string) => fs.statSync(file).ino
  const before = written.map((listing) => ({ seq: listing.seq, inode: inode(listing.file) }))
  t.ok(before.length > 0, 'the first stop wrote a snapshot')

  server = await spawnServer(dataDir)
  const list = await server.client.request('GET', '/v1/time/projects', { tenant: 'still', query: { token } })
  t.equal(list.status, 200, 'the tenant was loaded (from its snapshot) and read')
  t.equal(await stopGracefully(server), 0)
  t.match(server.output(), /\nsnapshot 0 tenants {2}0 records in \d+m?s\n/, 'the stop says it wrote none')
  t.same(
    listSnapshots(dataDir, 'still').map((listing) => ({ seq: listing.seq, inode: inode(listing.file) })),
    before,
    'the snapshot files are those of the first stop: none was written again',
  )
})
