/*
 * The binary COPY of cluster mode's snapshots (binaryCopy.ts): a stream
 * cut anywhere reads as the rows written; a stream cut short or foreign is
 * refused. Against a real PostgreSQL: rows of megabytes written by COPY
 * FROM STDIN read back by COPY TO STDOUT, again and again on one
 * connection, which answers a query after each (the client's patch: the
 * socket a COPY's stream paused is resumed when the COPY ends); a COPY
 * FROM STDIN the server refuses fails with the server's error instead of
 * never finishing (the client's patch: its stream fails).
 */
import crypto from 'node:crypto'
import type { Writable } from 'node:stream'
import t, { type Test } from 'tap'
import postgres from 'postgres'
import { type CopyField, CopyOutRows, copyInHeader, copyInRow, copyInTrailer, sqlLiteral } from '../../../src/persist/postgres/binaryCopy.js'
import { startPostgres, type PostgresServer } from '../../helpers/postgresServer.js'
import { installed } from '../../helpers/systemPrograms.js'

/** The longest a COPY may take here before the test calls it hung (a hang is the failure looked for, not a slowness). */
const HUNG_MS = 30_000

function stream(rows: readonly CopyField[][]): Buffer {
  return Buffer.concat([copyInHeader(), ...rows.flatMap((row) => copyInRow(row)), copyInTrailer()])
}

function int8(value: number): Buffer {
  const bytes = Buffer.alloc(8)
  bytes.writeBigInt64BE(BigInt(value))
  return bytes
}

function int4(value: number): Buffer {
  const bytes = Buffer.alloc(4)
  bytes.writeInt32BE(value)
  return bytes
}

t.test('a stream cut anywhere reads as the rows written', async (t) => {
  const blob = crypto.randomBytes(300)
  const rows: CopyField[][] = [
    [{ text: 'acme' }, { int8: -1_700_000_000_000_001 }, { int4: 0 }, { bytes: blob }],
    [{ text: 'ü' }, { int8: 7 }, { int4: 1 }, { bytes: new Uint8Array(0) }],
  ]
  const expected = [
    [Buffer.from('acme'), int8(-1_700_000_000_000_001), int4(0), blob],
    [Buffer.from('ü'), int8(7), int4(1), Buffer.alloc(0)],
  ]
  const bytes = stream(rows)
  for (const chunkBytes of [1, 2, 3, 5, 7, 64, bytes.length]) {
    const reader = new CopyOutRows(4)
    const read: Buffer[][] = []
    for (let at = 0; at < bytes.length; at += chunkBytes) read.push(...reader.push(bytes.subarray(at, at + chunkBytes)))
    reader.end()
    t.same(
      read.map((row) => row.map((field) => field.toString('hex'))),
      expected.map((row) => row.map((field) => field.toString('hex'))),
      `in chunks of ${chunkBytes} bytes`,
    )
  }
})

t.test('a stream cut short or not a binary COPY is refused', async (t) => {
  const bytes = stream([[{ bytes: Buffer.from('abc') }]])
  const short = new CopyOutRows(1)
  short.push(bytes.subarray(0, bytes.length - 2))
  t.throws(() => short.end(), /before its trailer/)
  t.throws(() => new CopyOutRows(1).push(Buffer.from('PGCOPY\nxxxxxxxxxxxxxxxxxx')), /bad signature/)
  t.throws(() => new CopyOutRows(2).push(bytes), /a row of 1 fields, not 2/)
})

t.test('an SQL literal quotes what it holds', async (t) => {
  t.equal(sqlLiteral("it's"), "E'it''s'")
  t.equal(sqlLiteral('a\\b'), "E'a\\\\b'")
  t.throws(() => sqlLiteral('a\0b'))
})

if (installed(t, ['postgresql'])) {
  let pg: PostgresServer
  t.before(async () => {
    pg = await startPostgres()
  })
  t.teardown(() => pg.stop())

  async function oneConnection(t: Test): Promise<postgres.Sql> {
    const sql = postgres(await pg.freshDatabase(), { max: 1, onnotice: () => undefined })
    t.teardown(() => sql.end({ timeout: 1 }))
    await sql`CREATE TABLE blobs (k int PRIMARY KEY, bytes bytea NOT NULL)`
    return sql
  }

  async function copyIn(sql: postgres.Sql, rows: readonly CopyField[][]): Promise<void> {
    const copy = (await sql`COPY blobs (k, bytes) FROM STDIN (FORMAT binary)`.writable()) as Writable
    await new Promise<void>((resolve, reject) => {
      copy.once('error', reject)
      copy.end(stream(rows), (error?: Error | null) => (error ? reject(error) : resolve()))
    })
  }

  function unlessHung<T>(work: Promise<T>): Promise<T | 'hung'> {
    let timer: NodeJS.Timeout | undefined
    return Promise.race([work, new Promise<'hung'>((resolve) => (timer = setTimeout(() => resolve('hung'), HUNG_MS)))]).finally(() => clearTimeout(timer))
  }

  t.test('rows of megabytes read back as written, again and again on one connection', async (t) => {
    const sql = await oneConnection(t)
    const blobs = Array.from({ length: 5 }, () => crypto.randomBytes(3 * 1024 * 1024))
    await copyIn(
      sql,
      blobs.map((blob, k) => [{ int4: k }, { bytes: blob }]),
    )
    for (let round = 1; round <= 4; round += 1) {
      const read = await unlessHung(
        (async () => {
          const out = await sql.unsafe('COPY (SELECT bytes FROM blobs ORDER BY k) TO STDOUT (FORMAT binary)').readable()
          const reader = new CopyOutRows(1)
          const rows: Buffer[] = []
          for await (const chunk of out as AsyncIterable<Buffer>) for (const [bytes] of reader.push(chunk)) if (bytes !== undefined) rows.push(bytes)
          reader.end()
          const [answer] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM blobs`
          return { rows, n: answer?.n }
        })(),
      )
      if (read === 'hung') {
        t.fail(`round ${round}: the connection hung after the COPY`)
        return
      }
      t.ok(read.rows.length === blobs.length && read.rows.every((bytes, k) => bytes.equals(blobs[k] as Buffer)), `round ${round}: the bytes written`)
      t.equal(read.n, blobs.length, `round ${round}: the connection answers a query after it`)
    }
  })

  t.test('a COPY FROM STDIN the server refuses fails with its error', async (t) => {
    const sql = await oneConnection(t)
    await sql`INSERT INTO blobs VALUES (1, '\\x00')`
    const outcome = await unlessHung(
      copyIn(sql, [[{ int4: 1 }, { bytes: Buffer.from('again') }]]).then(
        () => 'stored',
        (error: unknown) => error,
      ),
    )
    t.not(outcome, 'hung', 'it ends')
    t.match(outcome, { code: '23505' }, 'with the duplicate key error')
    t.same(await sql`SELECT k FROM blobs`, [{ k: 1 }], 'and the connection goes on')
  })
}
