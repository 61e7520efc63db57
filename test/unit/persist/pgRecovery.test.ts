/*
 * Recovery from PostgreSQL: the same entries and snapshot written to the
 * embedded store (LMDB and a snapshot file) and to PostgreSQL give, through
 * recoverTenant after prepare, the same state (the snapshot, then the log
 * after it). A snapshot's bytes in PostgreSQL are the embedded file's,
 * byte for byte, in parts. A damaged snapshot is skipped for the one
 * before it (and counted), pruning sets it aside, and log pruning and
 * truncation keep the synchronous reads right. A synchronous read of a
 * tenant never prepared throws naming it; after forget, the sequence
 * numbers still answer.
 */
import crypto from 'node:crypto'
import fs from 'node:fs'
import t, { type Test } from 'tap'
import postgres from 'postgres'
import { TenantState } from '../../../src/engine/tenantState.js'
import { EmbeddedStorage } from '../../../src/persist/embeddedStorage.js'
import type { PgStorage } from '../../../src/persist/postgres/index.js'
import { PART_BYTES } from '../../../src/persist/postgres/snapshotUpload.js'
import { recoverTenant, snapshotBodyOf } from '../../../src/tenants/recovery.js'
import { holdTenant, openNode, timeRecordEntry } from '../../helpers/pgStorage.js'
import { startPostgres, type PostgresServer } from '../../helpers/postgresServer.js'
import { tempDataDir } from '../../helpers/server.js'
import { installed } from '../../helpers/systemPrograms.js'

if (installed(t, ['postgresql'])) {
  const MAP_SIZE_BYTES = 64 * 1024 * 1024
  const AT = 1_700_000_000_000

  let pg: PostgresServer
  t.before(async () => {
    pg = await startPostgres()
  })
  t.teardown(() => pg.stop())

  const entries = Array.from({ length: 8 }, (_, at) => timeRecordEntry(`record ${at + 1}`, AT + at * 1000))

  /** The state after the first `count` entries, as the engine applies them. */
  function stateAfter(count: number): TenantState {
    const state = new TenantState('acme')
    for (const [index, entry] of entries.slice(0, count).entries()) state.applyEntry(index + 1, entry)
    return state
  }

  async function partsOf(url: string, seq: number): Promise<Buffer> {
    const sql = postgres(url, { max: 1 })
    try {
      const rows = await sql<{ bytes: Buffer }[]>`SELECT bytes FROM snapshot_parts WHERE tenant = 'acme' AND seq = ${seq} ORDER BY part`
      return Buffer.concat(rows.map((row) => row.bytes))
    } finally {
      await sql.end()
    }
  }

  async function filled(t: Test): Promise<{ node: PgStorage; url: string; embedded: EmbeddedStorage; embeddedFile: string }> {
    const dataDir = tempDataDir('pg-recovery')
    const embedded = EmbeddedStorage.open(dataDir, MAP_SIZE_BYTES)
    const url = await pg.freshDatabase()
    const node = await openNode(url, 'a')
    t.teardown(async () => {
      await node.close()
      await embedded.close()
      fs.rmSync(dataDir, { recursive: true, force: true })
    })
    await holdTenant(node, 'acme')
    for (const store of [embedded, node]) await Promise.all(entries.map((entry, at) => store.append('acme', at + 1, entry)))
    const body = snapshotBodyOf(stateAfter(3))
    const { file } = await embedded.snapshots.write('acme', 3, AT, body)
    await node.snapshots.write('acme', 3, AT, body)
    return { node, url, embedded, embeddedFile: file }
  }

  t.test('recovery after prepare equals the embedded recovery; the snapshot bytes are the file', async (t) => {
    const { node, url, embedded, embeddedFile } = await filled(t)
    t.ok((await partsOf(url, 3)).equals(fs.readFileSync(embeddedFile)), 'byte for byte the embedded snapshot file')
    await node.prepare('acme')
    const fromPg = recoverTenant('acme', node)
    const fromLmdb = recoverTenant('acme', embedded)
    t.equal(fromPg.report.snapshotSeq, 3, 'from the snapshot')
    t.equal(fromPg.report.replayedEntries, 5, 'then the 5 entries after it')
    t.equal(fromPg.state.seq, 8)
    t.same(snapshotBodyOf(fromPg.state), snapshotBodyOf(fromLmdb.state), 'the same state as the embedded store')
    t.same(snapshotBodyOf(fromPg.state), snapshotBodyOf(stateAfter(8)), 'which is the state of the 8 entries')
    t.same([...node.seqs('acme')], [...embedded.seqs('acme')], 'the same sequence numbers')
    const [stored] = node.snapshots.list('acme')
    if (stored === undefined) throw new Error('no snapshot stored')
    t.equal(node.snapshots.readHeader(stored.file).sha256, embedded.snapshots.readHeader(embeddedFile).sha256, 'the same header')
  })

  t.test('a snapshot larger than a part is stored in parts and read back whole', async (t) => {
    const { node, url } = await filled(t)
    const big = stateAfter(8)
    const body = snapshotBodyOf(big)
    body.collections.TimeRecord = Array.from({ length: 3000 }, (_, at) => ({ ...(body.collections.TimeRecord?.[0] as object), id: `big${at}`, description: crypto.randomBytes(300).toString('hex') }))
    const { bytes } = await node.snapshots.write('acme', 8, AT, body)
    t.ok(bytes > PART_BYTES, `${bytes} bytes, over one part`)
    t.equal((await partsOf(url, 8)).length, bytes, 'all parts together')
    await node.prepare('acme')
    const { state, report } = recoverTenant('acme', node)
    t.equal(report.snapshotSeq, 8)
    t.equal(state.collection('TimeRecord').size, 3000, 'every record read back')
  })

  t.test('an unplaced snapshot is listed only once placed, as the bytes the embedded file has; one left unplaced is pruned', async (t) => {
    const { node, url, embedded } = await filled(t)
    const big = stateAfter(8)
    const body = snapshotBodyOf(big)
    body.collections.TimeRecord = Array.from({ length: 3000 }, (_, at) => ({ ...(body.collections.TimeRecord?.[0] as object), id: `big${at}`, description: crypto.randomBytes(300).toString('hex') }))
    const unplaced = await node.snapshots.writeUnplaced('acme', AT + 9000, body)
    const left = await node.snapshots.writeUnplaced('acme', AT + 9000, snapshotBodyOf(stateAfter(2)))
    await node.prepare('acme')
    t.same(
      node.snapshots.list('acme').map((listing) => listing.seq),
      [3],
      'not listed before it is placed',
    )
    const { bytes } = await unplaced.place(9)
    t.ok(bytes > PART_BYTES, `${bytes} bytes, over one part`)
    const { file } = await embedded.snapshots.write('acme', 9, AT + 9000, body)
    t.ok((await partsOf(url, 9)).equals(fs.readFileSync(file)), 'placed: byte for byte the embedded snapshot file of that seq')
    t.same(
      node.snapshots.list('acme').map((listing) => listing.seq),
      [9, 3],
    )
    await node.prepare('acme')
    const { state, report } = recoverTenant('acme', node)
    t.equal(report.snapshotSeq, 9, 'recovery takes it')
    t.equal(state.collection('TimeRecord').size, 3000)

    const sql = postgres(url, { max: 1 })
    const unplacedRows = async () => (await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM snapshot_parts WHERE tenant = 'acme' AND seq < 0`)[0]?.n
    t.equal(await unplacedRows(), 1, 'the other one is still stored, unplaced')
    await node.snapshots.prune('acme', 3, 0, () => true)
    t.equal(await unplacedRows(), 1, "pruning leaves this process's own unplaced snapshot")
    await left.discard()
    t.equal(await unplacedRows(), 0, 'discarded')
    // One left by a writer that stopped before placing it (another process: this one does not know it).
    await sql`INSERT INTO snapshots (tenant, seq, at, format, body_bytes, sha256, parts, total_bytes) VALUES ('acme', -5, 0, 6, 1, '', 1, 13)`
    await sql`INSERT INTO snapshot_parts (tenant, seq, part, bytes) VALUES ('acme', -5, 0, '\\x00')`
    t.equal(await unplacedRows(), 1)
    await node.snapshots.prune('acme', 3, 0, () => true)
    t.equal(await unplacedRows(), 0, "pruning removes another writer's unplaced snapshot")
    await sql.end()
  })

  t.test('a snapshot is stored as it is made without the lease row; only its placement waits for it', async (t) => {
    const { node, url } = await filled(t)
    const body = snapshotBodyOf(stateAfter(8))
    body.collections.TimeRecord = Array.from({ length: 3000 }, (_, at) => ({ ...(body.collections.TimeRecord?.[0] as object), id: `big${at}`, description: crypto.randomBytes(300).toString('hex') }))
    const sql = postgres(url, { max: 2 })
    t.teardown(() => sql.end({ timeout: 1 }))
    // The lease row locked as a takeover locks it, until released.
    let release: () => void = () => undefined
    const released = new Promise<void>((resolve) => (release = resolve))
    let locked: () => void = () => undefined
    const lockTaken = new Promise<void>((resolve) => (locked = resolve))
    const locking = sql.begin(async (tx) => {
      await tx`SELECT 1 FROM leases WHERE tenant = 'acme' FOR UPDATE`
      locked()
      await released
    })
    t.teardown(() => release())
    await lockTaken
    const writing = node.snapshots.write('acme', 8, AT, body)
    const unplacedParts = async () => (await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM snapshot_parts WHERE tenant = 'acme' AND seq < 0`)[0]?.n ?? 0
    const deadline = Date.now() + 30_000
    while ((await unplacedParts()) < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
    t.ok((await unplacedParts()) >= 2, 'its parts are stored, unplaced, while the lease row is locked')
    t.same(await sql`SELECT seq FROM snapshots WHERE tenant = 'acme' AND seq = 8`, [], 'not yet at its seq')
    release()
    await locking
    const { bytes } = await writing
    t.ok(bytes > PART_BYTES, `${bytes} bytes, over one part`)
    t.equal((await partsOf(url, 8)).length, bytes, 'placed once the lease row is free')
    t.equal(await unplacedParts(), 0, 'nothing left unplaced')
  })

  t.test('a damaged snapshot is skipped for the one before it, counted, and set aside by pruning', async (t) => {
    const { node, url } = await filled(t)
    await node.snapshots.write('acme', 6, AT + 6000, snapshotBodyOf(stateAfter(6)))
    const sql = postgres(url, { max: 1 })
    await sql`UPDATE snapshot_parts SET bytes = overlay(bytes placing '\\xff'::bytea from length(bytes) - 3) WHERE tenant = 'acme' AND seq = 6`
    await sql.end()
    await node.prepare('acme')
    t.equal(node.snapshots.faults.count, 1, 'prepare found it and counted it')
    const { state, report } = recoverTenant('acme', node)
    t.equal(report.snapshotSeq, 3, 'recovery went back to the snapshot at 3')
    t.equal(report.skippedSnapshots.length, 1, 'naming the one skipped')
    t.same(snapshotBodyOf(state), snapshotBodyOf(stateAfter(8)), 'the state is whole')
    t.equal(node.snapshots.faults.count, 1, 'counted once')
    const logNeededAfter = await node.snapshots.prune('acme', 1, AT + 100_000, (seq) => !node.hasEntry('acme', seq))
    t.same(
      node.snapshots.list('acme').map((listing) => listing.seq),
      [3],
      'the damaged one is set aside, no longer listed',
    )
    t.equal(logNeededAfter, 3, 'the log up to the kept snapshot is no longer needed')
  })

  t.test('log pruning and truncation keep the synchronous reads right', async (t) => {
    const { node } = await filled(t)
    await node.prepare('acme', { wholeLog: true })
    t.equal(node.entryAt('acme', 2)?.at, AT + 1000, 'wholeLog: an entry before the snapshot reads')
    t.equal(await node.prune('acme', 5, AT + 2500), 3, 'pruned up to the first entry written at or after beforeMs')
    t.equal(node.firstSeq('acme'), 4)
    t.equal(node.logLength('acme'), 5)
    t.equal(node.entryAt('acme', 2), undefined, 'a pruned entry is gone')
    await node.truncateAfter('acme', 6)
    t.equal(node.lastSeq('acme'), 6)
    t.same(
      [...node.entriesAfter('acme', 3)].map((read) => read.seq),
      [4, 5, 6],
    )
    t.equal(node.logEntryCount(), 3)
    node.forget('acme')
    t.equal(node.lastSeq('acme'), 6, 'after forget the sequence numbers still answer')
    t.ok(node.hasEntry('acme', 5))
    await node.append('acme', 7, timeRecordEntry('after forget'))
    t.equal(node.lastSeq('acme'), 7, 'and follow appends')
    t.throws(() => [...node.entriesAfter('acme', 0)], /forgotten/, 'the entries themselves are gone')
    t.throws(() => node.lastSeq('never'), /tenant 'never'.*not prepared/, 'a tenant never prepared throws naming it')
    t.throws(() => node.snapshots.list('never'), /tenant 'never'/)
  })
}
