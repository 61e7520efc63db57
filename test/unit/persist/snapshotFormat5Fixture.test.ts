/*
 * A snapshot written by the build before format 6 (main at 69040af: format
 * 5, every record in msgpack slices; the README beside it in test/fixtures/snapshotFormat5/
 * says how it was made) loads with this build and answers the same: its
 * records and report totals hash as that build hashed them when it wrote
 * the file. Written again by this build, the time records go as columns
 * (format 6), and the state loaded from that file, in memory and from a
 * file read a piece at a time, answers the same again.
 */
import t from 'tap'
import crypto from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import zlib from 'node:zlib'
import { fileURLToPath } from 'node:url'
import { TenantState } from '../../../src/engine/tenantState.js'
import { encodeSnapshot, writeSnapshotInSlices } from '../../../src/persist/snapshotFile.js'
import { decodeSnapshot, readSnapshotFile } from '../../../src/persist/snapshotReading.js'
import type { SnapshotBody } from '../../../src/persist/ports.js'
import { loadSnapshotBody, snapshotBodyOf, snapshotSourceOf } from '../../../src/tenants/recovery.js'

const fixtureDir = fileURLToPath(new URL('../../fixtures/snapshotFormat5/', import.meta.url))
const bytes = zlib.gunzipSync(fs.readFileSync(path.join(fixtureDir, 'acme-4321.tlsnap.gz')))
const expected = JSON.parse(fs.readFileSync(path.join(fixtureDir, 'acme-4321.expected.json'), 'utf8')) as {
  header: { format: number; tenant: string; seq: number }
  records: Record<string, { count: number; sha256: string }>
  reportTotalsSha256: string
}

const digest = (value: unknown): string => crypto.createHash('sha256').update(JSON.stringify(value)).digest('hex')

function loaded(body: SnapshotBody): TenantState {
  const state = new TenantState('acme')
  loadSnapshotBody(state, body)
  state.seq = expected.header.seq
  return state
}

/** What the state answers, as the fixture's build hashed it. */
function answers(state: TenantState): unknown {
  const body = snapshotBodyOf(state)
  return {
    records: Object.fromEntries(Object.entries(body.collections).map(([type, recs]) => [type, { count: recs.length, sha256: digest(recs) }])),
    reportTotalsSha256: digest(body.derived?.reportTotals),
  }
}

const wanted = { records: expected.records, reportTotalsSha256: expected.reportTotalsSha256 }

t.test('a format 5 snapshot of the build before loads and answers as that build wrote it', async (t) => {
  const { header, body } = decodeSnapshot(bytes)
  t.match(header, expected.header)
  t.equal(body.columns, undefined, 'format 5 holds records only')
  const state = loaded(body)
  t.same(answers(state), wanted)
  t.equal(state.get('TimeRecord', 'not-a-uuid-7')?.description, 'Meeting', 'an id that is not a UUID')
  t.equal([...state.collection('TimeRecord').lookup('project', '00000002-0000-4000-8000-000000000001')].length, 820, 'an index lookup')
})

t.test('written again, its time records go as columns (format 6) and load to the same answers', async (t) => {
  const before = loaded(decodeSnapshot(bytes).body)
  const { source, release } = snapshotSourceOf(before)
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tl-format5-'))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  try {
    const inMemory = encodeSnapshot('acme', before.seq, 1000, source)
    const { file } = await writeSnapshotInSlices(dir, 'acme', before.seq, 1000, source)
    t.ok(fs.readFileSync(file).equals(inMemory), 'the file is the bytes encoded in memory')
    for (const [how, read] of [
      ['in memory', () => decodeSnapshot(inMemory)],
      ['from a file', () => readSnapshotFile(file)],
    ] as const) {
      const { header, body } = read()
      t.equal(header.format, 6, how)
      t.same(
        body.columns?.tables.map((table) => table.type),
        ['TimeRecord'],
        `${how}: the time records as columns, the small collections as records`,
      )
      t.same(Object.keys(body.collections).sort(), ['Account', 'Project', 'User'], how)
      const after = loaded(body)
      t.same(answers(after), wanted, how)
      t.same([...after.collection('TimeRecord').lookup('project', '00000002-0000-4000-8000-000000000001')].length, 820, `${how}: an index rebuilt from the columns`)
      t.equal(after.get('TimeRecord', 'not-a-uuid-7')?.description, 'Meeting', how)
      t.equal(after.pool.size, before.pool.size, `${how}: the same texts pooled`)
      const projects = [...before.collection('Project').values()].map((project) => project.id)
      const counts = (state: TenantState) => projects.map((id) => state.aggregates.count('Project', 'timerecords-count', id, '00000001-0000-4000-8000-000000000000'))
      t.same(counts(after), counts(before), `${how}: the projects' time record counters, taken from the columns`)
      t.ok(
        counts(after).every((count) => count > 0),
        `${how}: counters that count`,
      )
    }
  } finally {
    release()
  }
})
