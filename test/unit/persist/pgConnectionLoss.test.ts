/*
 * The PostgreSQL client of cluster mode (connection.ts) when its
 * connections are lost under it, as a network cut or a failover drops them
 * (a TCP proxy between the client and the server resets every connection,
 * tcpProxy.ts): a query the pool hands to a connection whose socket has
 * failed but not yet closed — the moment in which a failed group commit
 * starts the next one — settles (with a lost-connection error the storage
 * sends again, or answered), and the pool answers the next query. Found by
 * the fault test (test/cluster/nemesis.test.ts): such a query never settled
 * (the client closed the connection without failing what was queued on it
 * after the error), and a node whose group commit it was appended nothing
 * more, for any tenant, while its lease renewals went on. The client is
 * patched for it (src/persist/postgres/patches).
 */
import t from 'tap'
import { isLostConnection, openSql } from '../../../src/persist/postgres/connection.js'
import { startPostgres, type PostgresServer } from '../../helpers/postgresServer.js'
import { installed } from '../../helpers/systemPrograms.js'
import { startTcpProxy } from '../../helpers/tcpProxy.js'

/** The pool's size (connection.ts). */
const POOL_CONNECTIONS = 6

if (installed(t, ['postgresql'])) {
  let pg: PostgresServer
  t.before(async () => {
    pg = await startPostgres()
  })
  t.teardown(() => pg.stop())

  /** What the promise came to, or 'still waiting' once `ms` passed. */
  function settledWithin<T>(promise: Promise<T>, ms: number): Promise<{ value: T } | { error: unknown } | 'still waiting'> {
    return Promise.race([
      promise.then(
        (value) => ({ value }),
        (error: unknown) => ({ error }),
      ),
      new Promise<'still waiting'>((resolve) => setTimeout(() => resolve('still waiting'), ms).unref()),
    ])
  }

  t.test('a query sent on a connection that failed and has not closed yet settles, and the pool goes on', async (t) => {
    const url = new URL(await pg.freshDatabase())
    const proxy = await startTcpProxy(pg.port)
    t.teardown(() => proxy.close())
    url.port = String(proxy.port)
    const sql = openSql(url.toString())
    t.teardown(() => sql.end({ timeout: 1 }))
    // Every pooled connection opened, then busy with a statement that would run for a minute.
    await Promise.all(Array.from({ length: POOL_CONNECTIONS }, () => sql`SELECT 1`))
    const busy = Array.from({ length: POOL_CONNECTIONS }, () => sql`SELECT pg_sleep(60)`)
    const check = openSql(pg.url)
    t.teardown(() => check.end({ timeout: 1 }))
    const deadline = Date.now() + 15_000
    while (Date.now() < deadline) {
      const [row] = await check<{ count: number }[]>`SELECT count(*)::int AS count FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(60)' AND state = 'active'`
      if ((row?.count ?? 0) >= POOL_CONNECTIONS) break
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    // The first failure is heard before its connection closed: a query sent then goes to a connection already lost.
    const sentAtTheLoss = busy[0]?.then(
      () => null,
      () => sql<{ one: number }[]>`SELECT 1 AS one`,
    ) as Promise<{ one: number }[] | null>
    for (const query of busy.slice(1)) query.catch(() => undefined)
    proxy.cut()
    proxy.heal()
    const outcome = await settledWithin(sentAtTheLoss, 20_000)
    t.not(outcome, 'still waiting', 'the query sent as the connections were lost settles')
    if (typeof outcome === 'object' && 'error' in outcome) t.ok(isLostConnection(outcome.error), `with a lost-connection error, which the storage sends again (${String(outcome.error)})`)
    else t.same(outcome, { value: [{ one: 1 }] }, 'or with its answer')
    t.same(await settledWithin(sql<{ two: number }[]>`SELECT 2 AS two`, 30_000), { value: [{ two: 2 }] }, 'the pool answers the next query on a new connection')
  })
}
