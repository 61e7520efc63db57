/*
 * The schema of cluster mode is made by the service at open: on a fresh
 * database every migration runs once and is recorded; opening again
 * changes nothing; nodes opening together apply each migration once (the
 * advisory lock); a database whose schema is newer than the code knows is
 * refused with an error naming both versions.
 */
import t from 'tap'
import postgres from 'postgres'
import { openPgStorage, SCHEMA_VERSION, SchemaTooNewError } from '../../../src/persist/postgres/index.js'
import { startPostgres, type PostgresServer } from '../../helpers/postgresServer.js'
import { installed } from '../../helpers/systemPrograms.js'

if (installed(t, ['postgresql'])) {
  let pg: PostgresServer
  t.before(async () => {
    pg = await startPostgres()
  })
  t.teardown(() => pg.stop())

  async function versions(url: string): Promise<number[]> {
    const sql = postgres(url, { max: 1 })
    try {
      return (await sql<{ version: number }[]>`SELECT version FROM schema_migrations ORDER BY version`).map((row) => row.version)
    } finally {
      await sql.end()
    }
  }

  t.test('a fresh database is migrated to the current version, and reopening changes nothing', async (t) => {
    const url = await pg.freshDatabase()
    const first = await openPgStorage(url, { nodeId: 'a' })
    await first.close()
    const expected = Array.from({ length: SCHEMA_VERSION }, (_, at) => at + 1)
    t.same(await versions(url), expected, 'each migration recorded once')
    const again = await openPgStorage(url, { nodeId: 'a' })
    t.same(await again.leases(), [], 'the tables are there')
    await again.close()
    t.same(await versions(url), expected, 'reopening applies nothing')
  })

  t.test('nodes starting together apply each migration once', async (t) => {
    const url = await pg.freshDatabase()
    const nodes = await Promise.all(['a', 'b', 'c'].map((nodeId) => openPgStorage(url, { nodeId })))
    await Promise.all(nodes.map((node) => node.close()))
    t.same(
      await versions(url),
      Array.from({ length: SCHEMA_VERSION }, (_, at) => at + 1),
    )
  })

  t.test('a schema newer than the code is refused, naming both versions', async (t) => {
    const url = await pg.freshDatabase()
    await (await openPgStorage(url, { nodeId: 'a' })).close()
    const sql = postgres(url, { max: 1 })
    await sql`INSERT INTO schema_migrations (version) VALUES (${SCHEMA_VERSION + 5})`
    await sql.end()
    const refused = await openPgStorage(url, { nodeId: 'a' }).then(
      () => null,
      (error: unknown) => error,
    )
    t.ok(refused instanceof SchemaTooNewError, 'refused')
    t.match((refused as Error).message, new RegExp(`version ${SCHEMA_VERSION + 5}.*version ${SCHEMA_VERSION}`))
  })
}
