/*
 * The global directory on PostgreSQL across nodes: a tenant row, an e-mail
 * and a confirmation written by one node reach another node's mirror by
 * NOTIFY (and a removal too), read synchronously in LMDB's key order; a
 * node whose listener reconnects loads the mirror again (it catches up on
 * what it missed); refreshTenant reads one row into the mirror, freshen
 * the entries under one key (a write without NOTIFY is seen after it); the layout
 * marker answers the current layout, so the old-layout rebuild never runs;
 * a row too large for a notification still reaches the other node.
 * Two nodes cannot both create one tenant name (the lease row's primary
 * key, through claim). Uploaded bytes round-trip without a mirror. Leases
 * renew and release by the database clock; nodes register and beat.
 */
import t from 'tap'
import postgres from 'postgres'
import { holdTenant, timeRecordEntry, twoNodes } from '../../helpers/pgStorage.js'
import { startPostgres, type PostgresServer } from '../../helpers/postgresServer.js'
import { installed } from '../../helpers/systemPrograms.js'

if (installed(t, ['postgresql'])) {
  let pg: PostgresServer
  t.before(async () => {
    pg = await startPostgres()
  })
  t.teardown(() => pg.stop())

  async function until(what: string, check: () => boolean, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs
    while (!check()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`)
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
  }

  t.test("one node's directory writes reach the other's mirror by NOTIFY, in key order", async (t) => {
    const { a, b } = await twoNodes(t, pg)
    await holdTenant(a, 'acme')
    await holdTenant(a, 'beta')
    const writes = [
      a.tenants.put('acme', { createdAt: 1, unconfirmed: true }),
      a.tenants.put('beta', { createdAt: 2 }),
      a.emails.put(['ann@example.com', 'beta'], ''),
      a.emails.put(['ann@example.com', 'acme'], ''),
      a.emails.put(['bob@example.com', 'acme'], ''),
      a.confirmations.put(['c0ffee', 'acme'], ''),
      a.append('acme', 1, timeRecordEntry('with the directory writes')),
    ]
    t.same(a.tenants.get('acme'), { createdAt: 1, unconfirmed: true }, 'the writer reads its put at once')
    await Promise.all(writes)
    await until('B sees the confirmation', () => b.confirmations.get(['c0ffee', 'acme']) === '')
    t.same(b.tenants.get('acme'), { createdAt: 1, unconfirmed: true }, 'B sees the tenant row')
    t.same([...b.tenants.getKeys()], ['acme', 'beta'], 'and lists the tenants in order')
    t.same(
      [...b.emails.getKeys({ start: ['ann@example.com', ''], end: ['ann@example.com', '\uffff'] })],
      [
        ['ann@example.com', 'acme'],
        ['ann@example.com', 'beta'],
      ],
      "one e-mail's tenants, in tenant order",
    )
    await a.emails.remove(['ann@example.com', 'beta'])
    await a.tenants.put('acme', { createdAt: 1 })
    await until('B sees the removal', () => b.emails.get(['ann@example.com', 'beta']) === undefined)
    await until('B sees the confirmed tenant', () => b.tenants.get('acme')?.unconfirmed === undefined)
    t.same(b.tenants.get('acme'), { createdAt: 1 })
    t.equal(b.emails.get('\u0001layout'), 'name-tenant-2', 'the layout marker answers the current layout')
    const damaged = `log entry 7 cannot be decoded: ${'x'.repeat(10_000)}`
    t.equal(await a.tenants.put('beta', { createdAt: 2, damaged }), true, 'a row too large for a notification')
    await until('B read the large row', () => b.tenants.get('beta')?.damaged === damaged)
    t.pass('reaches the other node too (sent by name, read from the database)')
  })

  t.test('a node whose listener reconnects loads the mirror again; refreshTenant reads one row', async (t) => {
    const { b, url } = await twoNodes(t, pg)
    const sql = postgres(url, { max: 1 })
    t.teardown(() => sql.end())
    await sql`INSERT INTO tenants (name, created_at) VALUES ('quiet', 5)`
    await sql`INSERT INTO emails (email, tenant) VALUES ('q@example.com', 'quiet')`
    t.equal(b.tenants.get('quiet'), undefined, 'a row written without NOTIFY is not seen yet')
    t.same(await b.refreshTenant('quiet'), { createdAt: 5 }, 'refreshTenant reads it')
    t.same(b.tenants.get('quiet'), { createdAt: 5 }, 'into the mirror')
    await sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`
    await until('the reconnected listener reloaded the mirror', () => b.emails.get(['q@example.com', 'quiet']) === '')
    t.pass('caught up')
  })

  t.test('freshen reads the entries under one key into the mirror, keeping this node’s writes not yet committed', async (t) => {
    const { a, url } = await twoNodes(t, pg)
    const sql = postgres(url, { max: 1 })
    t.teardown(() => sql.end())
    await sql`INSERT INTO emails (email, tenant) VALUES ('f@example.com', 'one'), ('f@example.com', 'two'), ('g@example.com', 'one')`
    await sql`INSERT INTO confirmations (hash, tenant) VALUES ('h1', 'one')`
    t.same([...a.emails.getKeys({ start: ['f@example.com', ''], end: ['f@example.com', '\uffff'] })], [], 'rows written without NOTIFY are not seen yet')
    await a.freshen('emails', 'f@example.com')
    t.same(
      [...a.emails.getKeys({ start: ['f@example.com', ''], end: ['f@example.com', '\uffff'] })],
      [
        ['f@example.com', 'one'],
        ['f@example.com', 'two'],
      ],
      'the e-mail’s entries, in order',
    )
    t.equal(a.emails.get(['g@example.com', 'one']), undefined, 'only those of the key asked for')
    await sql`DELETE FROM emails WHERE email = 'f@example.com' AND tenant = 'one'`
    await a.freshen('emails', 'f@example.com')
    t.equal(a.emails.get(['f@example.com', 'one']), undefined, 'a row removed without NOTIFY goes')
    t.equal(a.emails.get(['f@example.com', 'two']), '', 'the other stays')
    await a.freshen('confirmations', 'h1')
    t.equal(a.confirmations.get(['h1', 'one']), '', 'a confirmation')
    await sql`INSERT INTO tenants (name, created_at) VALUES ('fresh', 7)`
    await a.freshen('tenants', 'fresh')
    t.same(a.tenants.get('fresh'), { createdAt: 7 }, 'a tenant row')

    await holdTenant(a, 'acme')
    const pending = a.emails.put(['f@example.com', 'acme'], '')
    await a.freshen('emails', 'f@example.com')
    t.equal(a.emails.get(['f@example.com', 'acme']), '', 'this node’s write issued before it stays, committed or not')
    t.equal(await pending, true, 'and commits')
  })

  t.test('two nodes cannot create one tenant name: the lease row decides', async (t) => {
    const { a, b } = await twoNodes(t, pg)
    const [claimA, claimB] = await Promise.all([a.claim('newco', 30_000), b.claim('newco', 30_000)])
    t.equal([claimA, claimB].filter((claim) => claim.held).length, 1, 'exactly one wins')
    const loser = claimA.held ? claimB : claimA
    t.match(loser, { held: false, owner: claimA.held ? 'a' : 'b' }, 'the other is told who holds it')
    t.ok(loser.expiresAtMs > loser.nowMs, 'and until when, by the database clock')
    const again = await (claimA.held ? a : b).claim('newco', 30_000)
    t.match(again, { held: true, epoch: claimA.held ? (claimA as { epoch: number }).epoch : (claimB as { epoch: number }).epoch }, 'a live lease of the holder is extended at the same epoch')
  })

  t.test('leases renew and release; nodes register and beat', async (t) => {
    const { a, b } = await twoNodes(t, pg)
    const epoch = await holdTenant(a, 'acme', 30_000)
    await holdTenant(a, 'beta', 30_000)
    const renewed = await a.renew(
      [
        { tenant: 'acme', epoch },
        { tenant: 'beta', epoch: 99 },
      ],
      60_000,
    )
    t.same(renewed.tenants, ['acme'], 'only the lease still held at its epoch is renewed')
    t.ok(renewed.expiresAtMs - renewed.nowMs === 60_000, 'for the lease time, by the database clock')
    t.equal(await a.release('acme', epoch), true, 'released')
    const claim = await b.claim('acme', 30_000)
    t.match(claim, { held: true, epoch: epoch + 1 }, 'another node takes a released tenant at once, at the next epoch')
    t.match(await a.leases(), [
      { tenant: 'acme', owner: 'b' },
      { tenant: 'beta', owner: 'a' },
    ])
    await a.registerNode('http://127.0.0.1:7001')
    await b.registerNode('http://127.0.0.1:7002')
    const [first] = await a.nodes()
    if (first === undefined) throw new Error('no node registered')
    const before = first.heartbeatAtMs
    await new Promise((resolve) => setTimeout(resolve, 20))
    t.equal(await a.heartbeat(), true)
    const nodes = await a.nodes()
    t.match(nodes, [
      { id: 'a', internalUrl: 'http://127.0.0.1:7001' },
      { id: 'b', internalUrl: 'http://127.0.0.1:7002' },
    ])
    t.ok((nodes[0]?.heartbeatAtMs ?? before) > before, 'the heartbeat moved')
  })

  t.test('uploaded bytes round-trip without a mirror', async (t) => {
    const { a, b } = await twoNodes(t, pg)
    await holdTenant(a, 'acme')
    const bytes = Buffer.from(Array.from({ length: 70_000 }, (_, at) => at % 251))
    t.equal(await a.files.put(['acme', 'logo'], bytes), true)
    const read = await b.files.get(['acme', 'logo'])
    t.ok(read?.equals(bytes), 'another node reads the same bytes')
    t.equal(await a.files.remove(['acme', 'logo']), true)
    t.equal(await a.files.get(['acme', 'logo']), undefined, 'removed')
    t.equal(await b.files.put(['acme', 'other'], bytes), false, 'a node not holding the tenant cannot write its files')
  })
}
