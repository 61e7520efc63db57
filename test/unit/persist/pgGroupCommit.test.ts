/*
 * Group commit and fencing on PostgreSQL (ARCHITECTURE.md §8): the appends of
 * several tenants issued in one event-loop turn go in ONE transaction (the
 * rows share their inserting transaction id, xmin), each resolves only
 * after COMMIT, and per tenant the log holds them in order. Two storages
 * act as two nodes: once B claims a tenant whose lease A let expire, A's
 * appends of it reject with FencedError and insert nothing, while another
 * tenant's appends in A's same group commit normally; B's go in. When B
 * takes over while A is writing, B's read after its claim holds every entry
 * A acknowledged (the claim waits for A's group in flight). A tenant not
 * held rejects at once. Entries whose append resolved survive an
 * immediate kill of PostgreSQL; after a group that failed, the tenant's
 * later appends are refused until it is reloaded (no gap in its log).
 */
import t from 'tap'
import postgres from 'postgres'
import { isLostConnection } from '../../../src/persist/postgres/connection.js'
import { FencedError } from '../../../src/persist/postgres/index.js'
import { holdTenant, openNode, timeRecordEntry, twoNodes } from '../../helpers/pgStorage.js'
import { startPostgres, type PostgresServer } from '../../helpers/postgresServer.js'
import { installed } from '../../helpers/systemPrograms.js'
import { startTcpProxy } from '../../helpers/tcpProxy.js'

if (installed(t, ['postgresql'])) {
  let pg: PostgresServer
  t.before(async () => {
    pg = await startPostgres()
  })
  t.teardown(() => pg.stop())

  async function query<T extends object>(url: string, text: string): Promise<T[]> {
    const sql = postgres(url, { max: 1 })
    try {
      return (await sql.unsafe(text)) as unknown as T[]
    } finally {
      await sql.end()
    }
  }

  t.test('appends of several tenants in one turn commit in one transaction, in order', async (t) => {
    const url = await pg.freshDatabase()
    const node = await openNode(url, 'a')
    t.teardown(() => node.close())
    for (const tenant of ['acme', 'beta', 'gamma']) await holdTenant(node, tenant)
    const appends: Promise<number>[] = []
    for (let seq = 1; seq <= 5; seq += 1) for (const tenant of ['acme', 'beta', 'gamma']) appends.push(node.append(tenant, seq, timeRecordEntry(`${tenant} ${seq}`)))
    const sizes = await Promise.all(appends)
    t.ok(
      sizes.every((bytes) => bytes > 0),
      'each append answers its size',
    )
    const rows = await query<{ tenant: string; seq: number; xid: string }>(url, 'SELECT tenant, seq::int, xmin::text AS xid FROM log ORDER BY tenant, seq')
    t.equal(rows.length, 15, 'every entry is in the log')
    t.equal(new Set(rows.map((row) => row.xid)).size, 1, 'all from one transaction')
    t.same(
      rows.filter((row) => row.tenant === 'beta').map((row) => row.seq),
      [1, 2, 3, 4, 5],
      'in order per tenant',
    )
    t.equal(node.commitStats.entriesPerCommit.count, 1, 'one commit counted')
    t.equal(node.commitStats.entriesPerCommit.sum, 15, 'with 15 entries')
    t.equal(node.lastSeq('beta'), 5, 'lastSeq follows the appends')
    t.equal(node.logLength('gamma'), 5)
    t.equal(node.logEntryCount(), 15)
    t.same(
      [...node.entriesAfter('acme', 3)].map(({ seq, entry }) => [seq, JSON.stringify(entry).includes(`acme ${seq}`)]),
      [
        [4, true],
        [5, true],
      ],
      'entries read back after prepare',
    )

    const nextTurn = [node.append('acme', 6, timeRecordEntry('acme 6'))]
    await new Promise((resolve) => setImmediate(resolve))
    nextTurn.push(node.append('acme', 7, timeRecordEntry('acme 7')))
    await Promise.all(nextTurn)
    const later = await query<{ xid: string }>(url, "SELECT DISTINCT xmin::text AS xid FROM log WHERE tenant = 'acme' AND seq >= 6")
    t.equal(later.length, 2, 'appends of two turns: two transactions')
  })

  t.test('a tenant not held rejects at once with FencedError', async (t) => {
    const url = await pg.freshDatabase()
    const node = await openNode(url, 'a')
    t.teardown(() => node.close())
    const refused = await node.append('nobody', 1, timeRecordEntry('x')).catch((error: unknown) => error)
    t.ok(refused instanceof FencedError, 'FencedError')
    t.match(refused, { tenant: 'nobody', epoch: 0 })
    t.equal(await node.tenants.put('nobody', { createdAt: 1 }), false, 'a directory write of it does not go in')
    t.equal(node.tenants.get('nobody'), undefined, 'nor stays in the mirror')
  })

  t.test('after B took over an expired lease, A is fenced: its appends insert nothing, another tenant of its group commits', async (t) => {
    const { a, b, url } = await twoNodes(t, pg)
    // A lease long enough that the next query runs within it on a loaded machine, short enough to wait out.
    const epochA = await holdTenant(a, 'acme', 1_000)
    t.equal((await b.claim('acme', 30_000)).held, false, 'B cannot claim while A holds a live lease')
    await holdTenant(a, 'beta')
    await Promise.all([a.append('acme', 1, timeRecordEntry('acme 1')), a.append('beta', 1, timeRecordEntry('beta 1'))])
    let claim = await b.claim('acme', 30_000)
    for (const deadlineMs = Date.now() + 10_000; !claim.held && Date.now() < deadlineMs; ) {
      await new Promise((resolve) => setTimeout(resolve, 50))
      claim = await b.claim('acme', 30_000)
    }
    t.ok(claim.held, 'B claims once the lease expired')
    t.equal(claim.held && claim.epoch, epochA + 1, 'at the next epoch')
    if (claim.held) b.hold('acme', claim.epoch)
    await b.prepare('acme')
    t.equal(b.lastSeq('acme'), 1, 'B sees what A acknowledged')

    const fenced = a.append('acme', 2, timeRecordEntry('acme 2 from A')).catch((error: unknown) => error)
    const other = a.append('beta', 2, timeRecordEntry('beta 2'))
    const dir = a.emails.put(['x@example.com', 'acme'], '')
    t.ok((await other) > 0, 'the other tenant of the same group commits')
    const error = await fenced
    t.ok(error instanceof FencedError, 'A is fenced')
    t.match(error, { tenant: 'acme', epoch: epochA })
    t.equal(await dir, false, "A's directory write of the tenant does not go in")
    t.equal(a.emails.get(['x@example.com', 'acme']), undefined, 'and is undone in its mirror')
    t.equal(a.heldEpoch('acme'), undefined, 'A no longer holds the tenant')
    const refusedAgain = await a.append('acme', 3, timeRecordEntry('acme 3 from A')).catch((error: unknown) => error)
    t.ok(refusedAgain instanceof FencedError, 'its later appends reject at once')

    await b.append('acme', 2, timeRecordEntry('acme 2 from B'))
    const rows = await query<{ tenant: string; seq: number }>(url, 'SELECT tenant, seq::int FROM log ORDER BY tenant, seq')
    t.same(
      rows,
      [
        { tenant: 'acme', seq: 1 },
        { tenant: 'acme', seq: 2 },
        { tenant: 'beta', seq: 1 },
        { tenant: 'beta', seq: 2 },
      ],
      "B's entry went in, A's did not",
    )
    const [entry] = [...b.entriesAfter('acme', 1)]
    t.ok(JSON.stringify(entry?.entry).includes('acme 2 from B'), 'the entry at 2 is B’s')
    const lease = await a.leaseOf('acme')
    t.match(lease, { tenant: 'acme', owner: 'b', epoch: epochA + 1 })
  })

  /** A writes until it is fenced, at most this many entries. */
  const MAX_WRITES = 20_000

  t.test('a takeover waits for the old owner’s group in flight: nothing acknowledged is missed', async (t) => {
    const { a, b } = await twoNodes(t, pg)
    await holdTenant(a, 'acme', 300)
    let acknowledged = 0
    let refused = 0
    const writes: Promise<void>[] = []
    const writer = (async () => {
      for (let seq = 1; refused === 0 && seq <= MAX_WRITES; seq += 1) {
        writes.push(
          a.append('acme', seq, timeRecordEntry(`acme ${seq}`)).then(
            () => {
              acknowledged = Math.max(acknowledged, seq)
            },
            () => {
              refused += 1
            },
          ),
        )
        if (seq % 10 === 0) await new Promise((resolve) => setTimeout(resolve, 5))
      }
    })()
    while (acknowledged === 0) await new Promise((resolve) => setTimeout(resolve, 5))
    let claim = await b.claim('acme', 30_000)
    while (!claim.held) claim = await b.claim('acme', 30_000)
    b.hold('acme', claim.epoch)
    await b.prepare('acme')
    const seenByB = b.lastSeq('acme')
    await writer
    await Promise.all(writes)
    t.ok(acknowledged > 0 && refused > 0, `the takeover came while A was writing (${acknowledged} acknowledged, ${refused} refused)`)
    t.ok(seenByB >= acknowledged, `B, reading after its claim, sees every acknowledged entry (B sees ${seenByB}, A acknowledged up to ${acknowledged})`)
    t.equal(acknowledged + refused, writes.length, 'every append was answered')
  })

  t.test('entries whose append resolved survive an immediate kill of PostgreSQL', async (t) => {
    const local = await startPostgres()
    t.teardown(() => local.stop())
    const url = await local.freshDatabase()
    const node = await openNode(url, 'a')
    await holdTenant(node, 'acme')
    await Promise.all(Array.from({ length: 50 }, (_, at) => node.append('acme', at + 1, timeRecordEntry(`acme ${at + 1}`))))
    local.kill()
    await node.close().catch(() => undefined)
    local.start()
    const again = await openNode(url, 'a')
    t.teardown(() => again.close())
    await holdTenant(again, 'acme')
    t.equal(again.lastSeq('acme'), 50, 'all 50 acknowledged entries are there')
    t.equal([...again.entriesAfter('acme', 0)].length, 50, 'and read back')
  })

  t.test('after a failed group commit the tenant appends nothing until it is reloaded: no gap in its log', async (t) => {
    const local = await startPostgres()
    t.teardown(() => local.stop())
    const url = await local.freshDatabase()
    const node = await openNode(url, 'a')
    t.teardown(() => node.close())
    await holdTenant(node, 'acme')
    await holdTenant(node, 'beta')
    // Every pooled connection in use once, so that all are found lost after the restart.
    await Promise.all(Array.from({ length: 8 }, () => node.leases()))
    await node.append('acme', 1, timeRecordEntry('acme 1'))
    local.kill()
    const failed = await node.append('acme', 2, timeRecordEntry('acme 2')).catch((error: unknown) => error)
    t.ok(failed instanceof Error && !(failed instanceof FencedError), 'the append of the failed group rejects')
    local.start()
    const [after, other] = await Promise.all([node.append('acme', 3, timeRecordEntry('acme 3')).catch((error: unknown) => error), node.append('beta', 1, timeRecordEntry('beta 1'))])
    t.match(after, /earlier group commit failed/, 'a later append of the tenant is refused, not written after the gap')
    t.ok(other > 0, 'another tenant of the same group commits, on a new connection (its INSERT found the old ones lost)')
    await node.truncateAfter('acme', 1)
    await node.append('acme', 2, timeRecordEntry('acme 2 again'))
    t.same([...node.seqs('acme')], [1, 2], 'after the reload (truncateAfter) appends go in again, without a gap')
  })

  t.test('a group commit waiting for busy connections settles when they are lost, and the group commit goes on', async (t) => {
    // Found by the fault test (test/cluster/nemesis.test.ts): a group commit queued while every pooled connection was
    // busy, whose connections were then lost and connected anew (a failover, a network cut), never settled: the node
    // appended nothing more, for any tenant, while its lease renewals went on, so no other node took its tenants. The
    // client strands a reserve() queued behind a connection that closes and reconnects (porsager/postgres#1195); the
    // group commit no longer reserves a connection.
    const url = await pg.freshDatabase()
    const proxy = await startTcpProxy(pg.port)
    t.teardown(() => proxy.close())
    const proxied = new URL(url)
    proxied.port = String(proxy.port)
    const node = await openNode(proxied.toString(), 'a')
    // Bounded: closing waits for the group commit in flight, which the stranded client never ends.
    t.teardown(() => within(node.close(), 5_000))
    await holdTenant(node, 'acme')
    // Every pooled connection (connection.ts: 6) busy with a statement that would run for a minute.
    const busy = Array.from({ length: 6 }, () => node.sql`SELECT pg_sleep(60)`.catch(() => undefined))
    const sleepers = async () => (await query<{ count: number }>(url, "SELECT count(*)::int AS count FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(60)' AND state = 'active'"))[0]?.count ?? 0
    const deadline = Date.now() + 15_000
    while ((await sleepers()) < 6 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
    let settled: string | null = null
    const append = node.append('acme', 1, timeRecordEntry('acme 1')).then(
      () => (settled = 'acknowledged'),
      (error: unknown) => (settled = `failed: ${String(error)}`),
    )
    await new Promise((resolve) => setTimeout(resolve, 200))
    t.equal(settled, null, 'the append waits for a connection')
    // The network drops every connection, and lets new ones through at once: the client connects anew.
    proxy.cut()
    proxy.heal()
    await Promise.all(busy)
    const outcome = await within(
      append.then(() => settled),
      20_000,
    )
    t.match(outcome, /^(acknowledged$|failed: )/, `the append settles: committed on a new connection, or failed, never acknowledged (${outcome})`)
    // A failed group leaves its tenant to be held again (a node reactivates it), and it appends from where the log ends.
    // The first statements may find their connections lost still (the pool connects anew): as a node, try again.
    if (outcome !== 'acknowledged') {
      const holdDeadline = Date.now() + 30_000
      for (;;) {
        const held = await holdTenant(node, 'acme').catch((error: unknown) => error)
        if (typeof held === 'number') break
        if (!isLostConnection(held) || Date.now() > holdDeadline) throw held
      }
    }
    const next = outcome === 'acknowledged' ? 2 : 1
    t.equal(typeof (await within(node.append('acme', next, timeRecordEntry(`acme ${next}`)), 20_000)), 'number', 'the group commit goes on: the next append commits')
    t.same([...node.seqs('acme')], outcome === 'acknowledged' ? [1, 2] : [1], 'the log holds what was acknowledged, without a gap')
  })

  /** The promise's value, or 'still waiting after <ms> ms' once that long passed. */
  function within<T>(promise: Promise<T>, ms: number): Promise<T | string> {
    return Promise.race([promise, new Promise<string>((resolve) => setTimeout(() => resolve(`still waiting after ${ms} ms`), ms).unref())])
  }
}
