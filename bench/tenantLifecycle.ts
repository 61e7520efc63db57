/*
 * The lifecycle figures a user of a large tenant sees, over HTTP against a
 * real server process (serverProcess.ts) on a throwaway copy of the fixture
 * (bench/data/<records>/, the big tenant `bench`), one after the other in
 * one server's life:
 *
 *   first request   the server has just started (the tenant is not in
 *                   memory): the owner's first login, which loads the tenant
 *                   on demand, and a second one for comparison (a login
 *                   hashes a password and writes a token either way)
 *   snapshot        SNAPSHOT_EVERY_COMMANDS (SNAPSHOT_EVERY) writes to the
 *                   big tenant, one at a time, start an automatic snapshot;
 *                   the window ends when its file is renamed into place
 *   restore         an online `restore --to-seq` through the admin listener
 *                   (`POST /tenants/bench/restore`) to the entry after the
 *                   fixture's snapshot: a load of the million records, the
 *                   replay, the restored state's snapshot and the swap. A
 *                   client polls the big tenant's `GET /v1/users/@self`
 *                   every POLL_MS meanwhile: the tenant's longest wait is its
 *                   longest answer (after the swap the old token answers 401,
 *                   which goes through the tenant as well); the server's
 *                   answer says how long the swap itself held the tenant
 *   stop            STOP_WRITES writes after the restore, then SIGTERM: the
 *                   time to the process's exit (a clean stop snapshots what
 *                   was written since the last snapshot and closes LMDB)
 *   restart         the server started again: its first request, a read
 *                   (`users/@self` with the token of before), which loads
 *                   the tenant from the snapshot that stop wrote (this
 *                   build's format); then SIGTERM with nothing written since
 *
 * During the first three a small tenant (signed up over HTTP, mixedLoad.ts)
 * sends `GET /v1/users/@self` one after another over its own connection:
 * its longest answer is the longest the event loop was held, the stall
 * every other tenant sees. (During a stop the server no longer listens.)
 *
 *   node dist/bench/tenantLifecycle.js [--records 1000000] [--cli <dist/src/cli.js of another build>] [--label text]
 *
 * prints one line `TENANT_LIFECYCLE {json}` at the end (times in ms).
 */
import fs from 'node:fs'
import os from 'node:os'
import { freePort } from '../test/helpers/freePort.js'
import { listSnapshots } from '../src/persist/snapshotFile.js'
import { scriptArgs } from './cliOptions.js'
import { copyFixture, readFixtureInfo } from './fixture.js'
import { BenchClient, withQuery } from './httpClient.js'
import { createSmallTenants } from './mixedLoad.js'
import { ownerLogin } from './scenarios.js'
import { pollSelf } from './selfPoller.js'
import { NO_AUTO_SNAPSHOTS, startServer } from './serverProcess.js'

const ADMIN_KEY = 'bench-lifecycle-admin-key'
/** Writes that start an automatic snapshot (the server's SNAPSHOT_EVERY_COMMANDS). */
const SNAPSHOT_EVERY = 40
/** Pause between two polls of the big tenant during the restore. */
const POLL_MS = 5
/** Writes to the big tenant between the restore and the stop, so that the stop has something to snapshot. */
const STOP_WRITES = 10
/** How often the snapshot folder is looked at while waiting for the automatic snapshot. */
const SNAPSHOT_LOOK_MS = 20

interface LifecycleFigures {
  records: number
  label: string
  loadAverage: number[]
  firstRequestMs: number
  secondRequestMs: number
  firstRequestStallMs: number
  snapshotMs: number
  snapshotStallMs: number
  restoreMs: number
  restoreServerMs: number
  /** How long the swap held the tenant, as the server says (null: a build whose answer does not say). */
  restoreSwapMs: number | null
  restoreTenantLongestWaitMs: number
  restoreTenantPolls: number
  restoreStallMs: number
  stopMs: number
  /** After that stop, started again: the first request, a read, which loads the tenant from the snapshot the stop wrote. */
  restartFirstReadMs: number
  /** And a clean stop with nothing written since that load. */
  stopUnchangedMs: number
}

/** The longest answer of the small tenant's polls while `work` runs, and `work`'s result. */
async function stallDuring<T>(port: number, tenant: string, token: string, work: () => Promise<T>): Promise<{ result: T; stallMs: number }> {
  const stop = pollSelf(port, tenant, token, 0)
  try {
    const result = await work()
    return { result, stallMs: (await stop()).longestMs }
  } catch (error) {
    await stop().catch(() => undefined)
    throw error
  }
}

async function addProject(client: BenchClient, tenant: string, token: string, name: string): Promise<void> {
  await client.expect(201, 'POST', withQuery('/v1/time/projects', { token }), { tenant, body: JSON.stringify({ name }) })
}

async function measureLifecycle(records: number, label: string, cli: string | undefined): Promise<LifecycleFigures> {
  const fixture = readFixtureInfo(records)
  if (fixture === null) throw new Error(`no fixture with ${records} records; run npm run bench:generate -- --records ${records}`)
  const dataDir = copyFixture(records, 'lifecycle')
  const tenant = fixture.tenant
  const baseSeq = listSnapshots(dataDir, tenant)[0]?.seq
  if (baseSeq === undefined) throw new Error('the fixture has no snapshot')
  const adminPort = await freePort()
  const env = { ...NO_AUTO_SNAPSHOTS, SNAPSHOT_EVERY_COMMANDS: String(SNAPSHOT_EVERY), ADMIN_PORT: String(adminPort), ADMIN_KEY }
  const server = await startServer({ dataDir, env, ...(cli === undefined ? {} : { cli }) })
  const setup = new BenchClient(server.port)
  const bigClient = new BenchClient(server.port)
  try {
    const [small] = await createSmallTenants(setup, 1)
    if (small === undefined) throw new Error('no small tenant')
    const stall = <T>(work: () => Promise<T>) => stallDuring(server.port, small.tenant, small.token, work)

    const first = await stall(() => ownerLogin(bigClient, fixture))
    const second = await ownerLogin(bigClient, fixture)

    const snapshot = await stall(async () => {
      const started = performance.now()
      for (let written = 0; listSnapshots(dataDir, tenant)[0]?.seq === baseSeq; written += 1) {
        if (written < SNAPSHOT_EVERY) await addProject(bigClient, tenant, second.token, `snapshot ${written}`)
        else await new Promise((resolve) => setTimeout(resolve, SNAPSHOT_LOOK_MS))
      }
      return performance.now() - started
    })

    const restore = await stall(async () => {
      const stopWaits = pollSelf(server.port, tenant, second.token, POLL_MS, [200, 401])
      const started = performance.now()
      const answer = await fetch(`http://127.0.0.1:${adminPort}/tenants/${tenant}/restore`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ toSeq: baseSeq + 1 }),
      })
      const text = await answer.text()
      const ms = performance.now() - started
      const polled = await stopWaits()
      if (answer.status !== 200) throw new Error(`restore: ${answer.status} ${text}`)
      const answered = JSON.parse(text) as { durationMs: number; swapMs?: number }
      return { ms, serverMs: answered.durationMs, swapMs: answered.swapMs ?? null, polled }
    })

    const afterRestore = await ownerLogin(bigClient, fixture)
    for (let written = 0; written < STOP_WRITES; written += 1) await addProject(bigClient, tenant, afterRestore.token, `stop ${written}`)
    for (const client of [setup, bigClient]) client.close()
    const stopStarted = performance.now()
    await server.stop()
    const stopMs = performance.now() - stopStarted

    // Started again: a read as the first request loads the tenant from the snapshot the stop wrote (this build's), and
    // a stop with nothing written since.
    const restarted = await startServer({ dataDir, env, ...(cli === undefined ? {} : { cli }) })
    let restartFirstReadMs: number
    let stopUnchangedMs: number
    try {
      const client = new BenchClient(restarted.port)
      restartFirstReadMs = (await client.expect(200, 'GET', withQuery('/v1/users/@self', { token: afterRestore.token }), { tenant })).ms
      client.close()
      const started = performance.now()
      await restarted.stop()
      stopUnchangedMs = performance.now() - started
    } finally {
      await restarted.stop()
    }
    return {
      records,
      label,
      loadAverage: os.loadavg().map((value) => Math.round(value * 10) / 10),
      firstRequestMs: first.result.ms,
      secondRequestMs: second.ms,
      firstRequestStallMs: first.stallMs,
      snapshotMs: snapshot.result,
      snapshotStallMs: snapshot.stallMs,
      restoreMs: restore.result.ms,
      restoreServerMs: restore.result.serverMs,
      restoreSwapMs: restore.result.swapMs,
      restoreTenantLongestWaitMs: restore.result.polled.longestMs,
      restoreTenantPolls: restore.result.polled.count,
      restoreStallMs: restore.stallMs,
      stopMs,
      restartFirstReadMs,
      stopUnchangedMs,
    }
  } finally {
    for (const client of [setup, bigClient]) client.close()
    await server.stop()
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
}

const args = scriptArgs({
  usage: 'node dist/bench/tenantLifecycle.js [options]',
  about:
    "A large tenant's lifecycle over HTTP on a copy of the fixture: the first request after a start, an automatic snapshot,\n" +
    'an online restore --to-seq (the tenant polled meanwhile), a clean stop; and the longest answer of a small tenant during\n' +
    'each (the stall others see). Prints TENANT_LIFECYCLE {json}.',
  options: {
    records: { value: 'n', help: 'the fixture (bench/data/<n>/) (default 1000000)' },
    cli: { value: '<file>', help: "another build's dist/src/cli.js to run as the server (an A/B against main)" },
    label: { value: 'text', help: 'a name for the run in the output (default: this build)' },
  },
})
const figures = await measureLifecycle(args.positiveInteger('records', 1_000_000), args.text('label') ?? (args.text('cli') === undefined ? 'this build' : 'other build'), args.text('cli'))
console.log(`TENANT_LIFECYCLE ${JSON.stringify(figures)}`)
