/*
 * An online restore holds the tenant only for the swap, not for the
 * snapshot of the restored state (src/tenants/installState.ts): the
 * snapshot store's writing is held back here until the test lets it go,
 * and while it is held the tenant answers a read from its state before the
 * restore (a build that writes the snapshot while holding the tenant makes
 * that read wait for the write: the test then fails on the read's 10 s
 * bound, which is liveness, not speed). Once let go, the restore answers,
 * the tenant serves the restored state, and a stop and restart keeps it.
 */
import t from 'tap'
import type { SnapshotStore } from '../../src/persist/ports.js'
import { adminRequest } from '../helpers/admin.js'
import type { TestClient } from '../helpers/http.js'
import { startInProcess, tempDataDir } from '../helpers/server.js'

const ADMIN_KEY = 'test-admin-key'
/** How long the read may take before it counts as waiting for the held write (a bound on liveness only). */
const READ_BOUND_MS = 10_000

async function names(client: TestClient, tenant: string, token: string): Promise<{ status: number; names: string[] }> {
  const list = await client.request('GET', '/v1/time/projects', { tenant, query: { token, $orderby: 'name' } })
  return { status: list.status, names: list.status === 200 ? (list.json as { name: string }[]).map((project) => project.name) : [] }
}

async function add(client: TestClient, tenant: string, token: string, name: string): Promise<void> {
  const created = await client.request('POST', '/v1/time/projects', { tenant, query: { token }, body: { name } })
  if (created.status !== 201) throw new Error(`create failed: ${created.status} ${created.text}`)
}

/** Holds back every snapshot write of `snapshots` (whole or unplaced) until `release`; `reached` resolves at the first. */
function holdSnapshotWrites(snapshots: SnapshotStore): { reached: Promise<void>; release: () => void } {
  let reach = () => {}
  const reached = new Promise<void>((resolve) => (reach = resolve))
  let release = () => {}
  const released = new Promise<void>((resolve) => (release = resolve))
  const held = snapshots as unknown as Record<'write' | 'writeUnplaced', (...args: unknown[]) => Promise<unknown>>
  for (const name of ['write', 'writeUnplaced'] as const) {
    const original = held[name]?.bind(snapshots)
    if (original === undefined) continue
    held[name] = async (...args: unknown[]) => {
      reach()
      await released
      return original(...args)
    }
  }
  return { reached, release }
}

t.test("the tenant answers from its state before the restore while the restored state's snapshot is written", async (t) => {
  const dataDir = tempDataDir('restore-swap')
  const env = { ADMIN_KEY, SNAPSHOT_EVERY_COMMANDS: '1000000' }
  let server = await startInProcess(dataDir, env)
  t.teardown(() => server.stop())
  const acme = await server.client.createTenant('acme')
  await add(server.client, 'acme', acme.token, 'kept')
  const point = server.service.services.registry.get('acme')?.state.seq ?? 0
  await add(server.client, 'acme', acme.token, 'undone')

  const hold = holdSnapshotWrites(server.service.services.registry.store.snapshots)
  const restore = adminRequest(server.service.adminPort, 'POST', '/tenants/acme/restore', ADMIN_KEY, JSON.stringify({ toSeq: point }))
  await hold.reached
  const during = await Promise.race([names(server.client, 'acme', acme.token), new Promise<null>((resolve) => setTimeout(() => resolve(null), READ_BOUND_MS).unref())])
  hold.release()
  t.same(during, { status: 200, names: ['kept', 'undone'] }, 'the read answered at once, from the state before the restore')

  const answer = await restore
  t.equal(answer.status, 200, answer.text)
  t.match(JSON.parse(answer.text), { tenant: 'acme', pointSeq: point })
  const token = await server.client.login('acme', acme.email, acme.password) // a restore ends every session
  t.same(await names(server.client, 'acme', token), { status: 200, names: ['kept'] }, 'the restored state after the swap')
  await add(server.client, 'acme', token, 'after')

  await server.stop()
  server = await startInProcess(dataDir, env)
  t.same(await names(server.client, 'acme', token), { status: 200, names: ['after', 'kept'] }, 'after a restart: the restored state and the later write')
})
