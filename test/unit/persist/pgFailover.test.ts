/*
 * The PostgreSQL storage across a failover (connection.ts): a URL naming a
 * standby and a primary with target_session_attrs=read-write reaches the
 * primary even when the standby comes first (the client alone would keep
 * the standby, which reports default_transaction_read_only off), and after
 * the primary is killed and the standby promoted, a storage's directory
 * listener finds the new primary by itself: another storage's directory
 * write reaches its mirror, and its own appends commit. An append whose
 * group commit was in flight when the primary died is sent again on a new
 * connection: it is acknowledged only if it committed on the promoted
 * standby (and is then in the log), or it fails, never acknowledged, and
 * its tenant takes no later append until it is held again, and then
 * appends from where the log ends.
 */
import postgres from 'postgres'
import t from 'tap'
import { openSql, targetSessionAttrs } from '../../../src/persist/postgres/connection.js'
import { holdTenant, openNode, timeRecordEntry } from '../../helpers/pgStorage.js'
import { startPostgres, type PostgresServer } from '../../helpers/postgresServer.js'
import { installed } from '../../helpers/systemPrograms.js'

if (installed(t, ['postgresql'])) {
  let pg: PostgresServer
  t.before(async () => {
    pg = await startPostgres({ standby: true })
  })
  t.teardown(() => pg.stop())

  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

  /** A URL naming the standby first, then the primary, for the database `name`. */
  function bothServers(name: string): string {
    const standby = pg.standby
    if (standby === undefined) throw new Error('no standby')
    return `postgres://postgres@127.0.0.1:${standby.port},127.0.0.1:${pg.port}/${name}?target_session_attrs=read-write`
  }

  /** Waits until the standby has replayed the creation of database `name` (synchronous commit waits for its flush only). */
  async function untilOnStandby(name: string): Promise<void> {
    const standby = pg.standby
    if (standby === undefined) throw new Error('no standby')
    const deadline = Date.now() + 15_000
    for (;;) {
      const sql = postgres(`postgres://postgres@127.0.0.1:${standby.port}/${name}`, { max: 1, onnotice: () => undefined })
      const there = await sql`SELECT 1`.then(
        () => true,
        () => false,
      )
      await sql.end()
      if (there) return
      if (Date.now() > deadline) throw new Error(`the standby did not replay database ${name}`)
      await sleep(50)
    }
  }

  t.test('read-write is given to the client as primary, from the URL or the environment', async (t) => {
    t.equal(targetSessionAttrs('postgres://u@a:1,b:2/db?target_session_attrs=read-write', {}), 'primary')
    t.equal(targetSessionAttrs('postgres://u@a:1/db', { PGTARGETSESSIONATTRS: 'read-write' }), 'primary')
    t.equal(targetSessionAttrs('postgres://u@a:1/db?target_session_attrs=any', { PGTARGETSESSIONATTRS: 'read-write' }), undefined, 'the URL wins')
    t.equal(targetSessionAttrs('postgres://u@a:1/db', {}), undefined)
  })

  t.test('the standby named first, read-write reaches the primary; after a promotion the storage follows', async (t) => {
    const name = new URL(await pg.freshDatabase()).pathname.slice(1)
    await untilOnStandby(name)
    const url = bothServers(name)
    const sql = openSql(url)
    const [where] = await sql<{ recovery: boolean }[]>`SELECT pg_is_in_recovery() AS recovery`
    await sql.end()
    t.equal(where?.recovery, false, 'connected to the primary, not to the standby named first')

    const listening = await openNode(url, 'listening')
    const writing = await openNode(url, 'writing')
    t.teardown(async () => {
      await listening.close()
      await writing.close()
    })
    await holdTenant(writing, 'before')
    t.ok(await writing.tenants.put('before', { createdAt: 1 }), 'a directory write before the failover')
    const reaches = async (tenant: string) => {
      const deadline = Date.now() + 15_000
      while (listening.tenants.get(tenant) === undefined && Date.now() < deadline) await sleep(20)
      return listening.tenants.get(tenant) !== undefined
    }
    t.ok(await reaches('before'), 'reaches the other storage’s mirror')

    // An append whose group commit is in flight when the primary dies: blocked on its tenant's lease row, locked here.
    await holdTenant(writing, 'inflight')
    const blocker = postgres(pg.url.replace(/\/postgres$/, `/${name}`), { max: 1, onnotice: () => undefined })
    let locked!: () => void
    const lockHeld = new Promise<void>((resolve) => (locked = resolve))
    const blocking = blocker
      .begin(async (tx) => {
        await tx`SELECT tenant FROM leases WHERE tenant = 'inflight' FOR UPDATE`
        locked()
        await new Promise(() => undefined)
      })
      .catch(() => undefined)
    await lockHeld
    let settled: 'acknowledged' | 'failed' | null = null
    const inFlight = writing.append('inflight', 1, timeRecordEntry('in flight at the kill')).then(
      () => (settled = 'acknowledged'),
      () => (settled = 'failed'),
    )
    await sleep(300)
    t.equal(settled, null, 'the append waits in its group commit')

    pg.promote()
    await inFlight
    // Its group is sent again on another connection (groupCommit.ts): it commits there once the promoted standby
    // takes it (acknowledged, and in the log), or fails before (never acknowledged; the tenant then takes no append
    // until it is held anew).
    t.ok(settled === 'failed' || settled === 'acknowledged', `the append in flight at the kill settles (${settled})`)
    void blocking
    await blocker.end({ timeout: 1 }).catch(() => undefined)
    // The first statements after the kill may fail (their connections were to the dead primary); the pool reconnects.
    const deadline = Date.now() + 30_000
    let epoch: number | undefined
    while (epoch === undefined && Date.now() < deadline) {
      epoch = await holdTenant(writing, 'after').catch(() => undefined)
      if (epoch === undefined) await sleep(100)
    }
    t.ok(epoch !== undefined, 'the writing storage claims a tenant on the promoted standby')
    t.ok(await writing.tenants.put('after', { createdAt: 2 }), 'a directory write after the failover commits')
    t.ok(await reaches('after'), 'the listening storage’s mirror hears it: its listener found the new primary')
    t.ok((await writing.append('after', 1, timeRecordEntry('after the failover'))) > 0, 'an append commits on the new primary')

    const inflightLog = async () => {
      const check = postgres(url, { max: 1, onnotice: () => undefined })
      const rows = await check<{ seq: number; entry: Buffer }[]>`SELECT seq::int AS seq, entry FROM log WHERE tenant = 'inflight' ORDER BY seq`
      await check.end()
      return rows
    }
    if (settled === 'acknowledged') {
      t.ok((await writing.append('inflight', 2, timeRecordEntry('after the failover'))) > 0, 'the tenant appends after its acknowledged entry')
      const rows = await inflightLog()
      t.same(
        rows.map((row) => row.seq),
        [1, 2],
        'its log holds both entries',
      )
      t.ok(rows[0]?.entry.includes('in flight at the kill'), 'the acknowledged one first')
      return
    }
    await t.rejects(writing.append('inflight', 2, timeRecordEntry('after a missing entry')), /an earlier group commit failed/, 'the tenant whose commit failed takes no append after the missing one')
    await holdTenant(writing, 'inflight')
    t.ok((await writing.append('inflight', 1, timeRecordEntry('again, after the failover'))) > 0, 'held again (as a node reactivates it), the tenant appends from where the log ends')
    const rows = await inflightLog()
    t.same(
      rows.map((row) => row.seq),
      [1],
      'its log holds one entry',
    )
    t.ok(rows[0]?.entry.includes('again, after the failover') && !rows[0]?.entry.includes('in flight at the kill'), 'the new one, not the one never acknowledged')
  })
}
