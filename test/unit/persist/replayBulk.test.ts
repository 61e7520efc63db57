/*
 * Replaying the log indexes new records in bulk (TenantState.applyEntry:
 * a new record waits, as a snapshot's do, for its collection's next
 * finishLoad; an update or removal in that collection runs it first). The
 * state replayed that way must be the state the writes built one put at a
 * time: the same records, index lookups, ordered reads, range walks and
 * report totals, over random entries that add, change, trash and remove
 * time records, and entries of several operations, each encoded and
 * decoded as the log does.
 */
import t from 'tap'
import { buildRecord } from '../../../src/domain/recordMaking.js'
import { TimeRecord } from '../../../src/domain/resources/timeRecord.js'
import type { Rec } from '../../../src/domain/schema.js'
import { LOG_ENTRY_FORMAT, type Op } from '../../../src/engine/logEntry.js'
import { TenantState } from '../../../src/engine/tenantState.js'
import { decodeLogEntry, encodeLogEntry } from '../../../src/persist/codec.js'
import { snapshotBodyOf } from '../../../src/tenants/recovery.js'
import { fuzzSeed, Random } from '../../helpers/fuzz.js'

const DAY_MS = 86_400_000
const USERS = ['u1', 'u2', 'u3']
const PROJECTS = ['p1', 'p2', 'p3', null]

function randomValues(random: Random): Record<string, unknown> {
  return {
    user: random.pick(USERS),
    project: random.pick(PROJECTS),
    start: random.chance(0.05) ? null : 1_700_000_000_000 + random.int(90) * DAY_MS + random.int(DAY_MS),
    duration: random.int(8 * 3_600_000),
    billable: random.chance(0.5),
    price: random.int(50_000) / 100,
  }
}

/** Entries of one to three operations: mostly new records, then changes, trashing and removals of live ones. */
function randomEntries(random: Random, count: number): Op[][] {
  const live: Rec[] = []
  const entries: Op[][] = []
  for (let index = 0; index < count; index += 1) {
    const ops: Op[] = []
    for (let size = 1 + (random.chance(0.1) ? random.int(3) : 0); ops.length < size; ) {
      const roll = random.int(100)
      const at = live.length === 0 ? -1 : random.int(live.length)
      const target = live[at]
      if (target === undefined || roll < 70) {
        const rec = buildRecord(TimeRecord, randomValues(random), 1_700_000_000_000 + index)
        live.push(rec)
        ops.push({ op: 'put', type: 'TimeRecord', rec })
      } else if (roll < 90) {
        const changed = roll < 85 ? randomValues(random) : { trashItem: target.trashItem === null ? `trash${index}` : null }
        const rec: Rec = { ...target, ...changed, version: target.version + 1 }
        live[at] = rec
        ops.push({ op: 'put', type: 'TimeRecord', rec })
      } else {
        live.splice(at, 1)
        ops.push({ op: 'del', type: 'TimeRecord', id: target.id })
      }
    }
    entries.push(ops)
  }
  return entries
}

const ids = (recs: Iterable<Rec> | null): string[] => [...(recs ?? [])].map((rec) => rec.id)

t.test('a replayed log, indexed in bulk, gives the state its writes built one put at a time', async (t) => {
  const seed = fuzzSeed()
  const entries = randomEntries(new Random(seed), 3_000)
  const written = new TenantState('acme')
  const replayed = new TenantState('acme')
  entries.forEach((ops, index) => {
    for (const op of ops) written.applyOp(op.op === 'put' ? { ...op, rec: { ...op.rec } } : op)
    replayed.applyEntry(index + 1, decodeLogEntry(encodeLogEntry({ v: LOG_ENTRY_FORMAT, at: index, ops })))
  })
  replayed.finishLoad()
  const mine = `(seed ${seed})`
  t.same(snapshotBodyOf(replayed), snapshotBodyOf(written), `the same records and report totals ${mine}`)
  const [a, b] = [replayed.collection('TimeRecord'), written.collection('TimeRecord')]
  for (const [field, values] of [
    ['user', USERS],
    ['project', PROJECTS],
  ] as const) {
    for (const value of values) {
      t.same(ids(a.lookup(field, value)).sort(), ids(b.lookup(field, value)).sort(), `${field} = ${value} ${mine}`)
      if (value === null) continue
      for (const descending of [false, true]) {
        t.same(ids(a.orderedLookup(field, value, 'start', descending)), ids(b.orderedLookup(field, value, 'start', descending)), `${field} = ${value} by start ${mine}`)
      }
    }
  }
  const walk = (state: TenantState) => ids(state.collection('TimeRecord').rangeIndexes.get('start')?.walk({ lowInclusive: true, highInclusive: true }, true) ?? [])
  t.same(walk(replayed).sort(), walk(written).sort(), `the range index holds the same records ${mine}`)
  t.equal(replayed.seq, entries.length)
})

t.test('a new record is found by id at once, and in the indexes once an update of its collection comes', async (t) => {
  const state = new TenantState('acme')
  const first = buildRecord(TimeRecord, { user: 'u1', project: 'p1', start: 1_700_000_000_000 }, 1)
  const second = buildRecord(TimeRecord, { user: 'u1', project: 'p1', start: 1_700_000_100_000 }, 2)
  state.applyEntry(1, { v: LOG_ENTRY_FORMAT, at: 1, ops: [{ op: 'put', type: 'TimeRecord', rec: first }] })
  state.applyEntry(2, { v: LOG_ENTRY_FORMAT, at: 2, ops: [{ op: 'put', type: 'TimeRecord', rec: second }] })
  t.equal(state.get('TimeRecord', first.id)?.id, first.id, 'by id before any index is built')
  state.applyEntry(3, { v: LOG_ENTRY_FORMAT, at: 3, ops: [{ op: 'put', type: 'TimeRecord', rec: { ...first, project: 'p2', version: 2 } }] })
  const collection = state.collection('TimeRecord')
  t.same(ids(collection.lookup('project', 'p1')), [second.id], 'the update indexed what waited, then moved its record')
  t.same(ids(collection.lookup('project', 'p2')), [first.id])
  t.equal(state.reports.overall.size, 2, 'the report totals count both')
})
