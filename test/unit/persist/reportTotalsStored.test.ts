/*
 * A snapshot keeps the report totals (ReportAggregates.stored) and a load
 * takes them back instead of adding up the records, when they fit: the
 * totals loaded equal the totals of the state the snapshot was taken of,
 * and equal the totals rebuilt from the records. Stored totals that do not
 * fit (another format, another time zone, a record count that is not the
 * records loaded, a damaged part) are not taken: the totals are rebuilt.
 * Each check could fail: the totals loaded from altered sums show the
 * alteration when the stored totals are taken, and not when they are not.
 * Totals waiting for a rebuild (the time zone changed) are not stored.
 */
import t from 'tap'
import { buildRecord } from '../../../src/domain/recordMaking.js'
import { resourceByType } from '../../../src/domain/resources/index.js'
import type { Rec } from '../../../src/domain/schema.js'
import { TenantState } from '../../../src/engine/tenantState.js'
import { loadSnapshotBody, snapshotBodyOf } from '../../../src/tenants/recovery.js'
import { encodeSnapshot, type SnapshotBody } from '../../../src/persist/snapshotFile.js'
import { decodeSnapshot } from '../../../src/persist/snapshotReading.js'
import { Random } from '../../helpers/fuzz.js'

const DAY_MS = 86_400_000
const ZONE = 'Europe/Berlin'

/** A tenant in ZONE with time records over two years (some without a start, some trashed, some changed or removed), its totals built. */
function tenantWithRecords(): TenantState {
  const random = new Random(2026_11_24)
  const state = new TenantState('acme')
  const put = (type: string, rec: Rec) => state.applyOp({ op: 'put', type, rec })
  put('Account', buildRecord(resourceByType('Account'), { timeZone: ZONE }, 0))
  const projects = ['p1', 'p2', 'p3', null]
  const users = ['u1', 'u2', 'u3']
  const records: Rec[] = []
  for (let index = 0; index < 2_000; index += 1) {
    const start = random.chance(0.02) ? null : Date.UTC(2025, 0, 1) + random.int(730 * DAY_MS)
    const values = {
      start,
      duration: random.int(8 * 3_600_000),
      billable: random.chance(0.5),
      price: random.chance(0.5) ? random.int(10_000) / 100 : null,
      project: random.pick(projects),
      user: random.pick(users),
    }
    const rec = buildRecord(resourceByType('TimeRecord'), values, index)
    if (random.chance(0.05)) rec.trashItem = 'trash-1'
    put('TimeRecord', rec)
    records.push(rec)
  }
  // Every record of p3 moves to p1 (p3's group is left empty), and some records go.
  for (const rec of records) if (rec.project === 'p3') put('TimeRecord', { ...rec, project: 'p1', version: 2 })
  for (const rec of records.slice(0, 100)) state.applyOp({ op: 'del', type: 'TimeRecord', id: rec.id })
  state.reports.current()
  return state
}

/** The body of a snapshot of `state`, as a fresh decoder reads it from the file. */
function snapshotRoundTrip(state: TenantState): SnapshotBody {
  return decodeSnapshot(encodeSnapshot(state.tenant, state.seq, 0, snapshotBodyOf(state))).body
}

function loaded(body: SnapshotBody): TenantState {
  const state = new TenantState('acme')
  loadSnapshotBody(state, body)
  return state
}

/** A part of the stored report totals as the snapshot holds it: the fields these tests alter are named. */
type StoredPart = { group: string; days: { sums: Uint8Array; days: Uint8Array }; [field: string]: unknown }

/** The body with its stored report totals changed by `change` (a deep copy: the parts of `body` stay as they are). */
function withTotals(body: SnapshotBody, change: (parts: StoredPart[]) => void): SnapshotBody {
  const parts = structuredClone(body.derived?.reportTotals) as StoredPart[]
  change(parts)
  return { ...body, derived: { reportTotals: parts } }
}

function overallDays(parts: StoredPart[]): { sums: Uint8Array; days: Uint8Array } {
  return (parts.find((part) => part.group === 'overall') as { days: { sums: Uint8Array; days: Uint8Array } }).days
}

/** Adds 1,000 ms to the time of the overall totals' first day (sums: count, time, …; the record counts stay right). */
function alterOverallSums(parts: StoredPart[]): void {
  const stored = overallDays(parts)
  const sums = new Float64Array(stored.sums.slice().buffer)
  sums[1] = (sums[1] as number) + 1_000
  stored.sums = new Uint8Array(sums.buffer)
}

/** Swaps the overall totals' first two days. */
function swapFirstDays(parts: StoredPart[]): void {
  const stored = overallDays(parts)
  const days = new Int32Array(stored.days.slice().buffer)
  ;[days[0], days[1]] = [days[1] as number, days[0] as number]
  stored.days = new Uint8Array(days.buffer)
}

const original = tenantWithRecords()
const body = snapshotRoundTrip(original)
const everything = (state: TenantState) => state.reports.current().overall.sum(null, null)

t.test('the stored totals load back as the totals of the state, and as the totals rebuilt from the records', async (t) => {
  t.ok(body.derived?.reportTotals !== undefined, 'the snapshot keeps the totals')
  const fromStored = loaded(body)
  t.same(fromStored.reports.stored(), original.reports.stored(), 'the same totals, group by group, day by day')
  const rebuilt = loaded({ collections: body.collections })
  t.same(rebuilt.reports.current().stored(), original.reports.stored(), 'the totals rebuilt from the records are the same')
  t.equal(everything(fromStored).count, original.collection('TimeRecord').size - [...original.collection('TimeRecord').values()].filter((rec) => rec.trashItem !== null).length)
  t.notOk(fromStored.reports.byProject.has('p3'), 'an empty group is not stored')
  t.ok(
    snapshotRoundTrip(fromStored).derived !== undefined && encodeSnapshot('acme', 0, 0, snapshotBodyOf(fromStored)).equals(encodeSnapshot('acme', 0, 0, snapshotBodyOf(original))),
    'a snapshot of the loaded state is byte for byte the first',
  )
})

/** `bytes` copied to an odd byte offset, where no Int32Array or Float64Array can view them. */
function unaligned(bytes: Uint8Array): Uint8Array {
  const room = new Uint8Array(bytes.length + 1)
  room.set(bytes, 1)
  return room.subarray(1)
}

t.test('a load takes the stored totals when they fit', async (t) => {
  const shifted = loaded(
    withTotals(body, (parts) => {
      for (const part of parts.slice(1)) Object.assign(part.days, { days: unaligned(part.days.days), sums: unaligned(part.days.sums) })
    }),
  )
  t.same(shifted.reports.stored(), original.reports.stored(), 'bytes at any offset read the same (copied when unaligned)')

  const altered = loaded(withTotals(body, alterOverallSums))
  t.equal(everything(altered).timeMs, everything(original).timeMs + 1_000, 'the altered sums were taken, not rebuilt')
  const first = [...altered.collection('TimeRecord').values()].find((rec) => rec.trashItem === null) as Rec
  altered.applyOp({ op: 'del', type: 'TimeRecord', id: first.id })
  t.equal(everything(altered).timeMs, everything(original).timeMs + 1_000 - (first.duration as number), 'and changes apply on top of them')
})

t.test('stored totals that do not fit are rebuilt from the records', async (t) => {
  const refusals: [string, (parts: StoredPart[]) => void][] = [
    [
      'another format',
      (parts) => {
        parts[0] = { ...(parts[0] as StoredPart), format: 0 }
      },
    ],
    [
      'another time zone',
      (parts) => {
        parts[0] = { ...(parts[0] as StoredPart), timeZone: 'UTC' }
      },
    ],
    [
      'a group missing (records not counted)',
      (parts) =>
        void parts.splice(
          parts.findIndex((part) => part.group === 'user'),
          1,
        ),
    ],
    ['a group twice', (parts) => void parts.push(parts.find((part) => part.group === 'project') as StoredPart)],
    [
      'no overall group',
      (parts) =>
        void parts.splice(
          parts.findIndex((part) => part.group === 'overall'),
          1,
        ),
    ],
    ['a group of an unknown kind', (parts) => void parts.push({ group: 'client', key: 'c1', days: overallDays(parts) })],
    [
      'sums of the wrong length',
      (parts) => {
        overallDays(parts).sums = overallDays(parts).sums.subarray(8)
      },
    ],
    ['days out of order', swapFirstDays],
    [
      'a day stored that holds no records',
      (parts) => {
        const stored = overallDays(parts)
        const sums = new Float64Array(stored.sums.slice().buffer)
        sums[0] = 0
        stored.sums = new Uint8Array(sums.buffer)
      },
    ],
    [
      'days of a length that is not whole days',
      (parts) => {
        overallDays(parts).days = overallDays(parts).days.subarray(1)
      },
    ],
    ['no parts at all', (parts) => void parts.splice(0, parts.length)],
  ]
  for (const [what, change] of refusals) {
    const state = loaded(
      withTotals(body, (parts) => {
        alterOverallSums(parts)
        change(parts)
      }),
    )
    t.same(state.reports.stored(), original.reports.stored(), `${what}: rebuilt`)
  }
})

t.test('totals waiting for a rebuild are not stored, and the load rebuilds them in the new zone', async (t) => {
  const state = tenantWithRecords()
  const account = [...state.collection('Account').values()][0] as Rec
  state.applyOp({ op: 'put', type: 'Account', rec: { ...account, timeZone: 'Asia/Kathmandu', version: 2 } })
  t.equal(state.reports.stored(), null)
  const reloaded = loaded(snapshotRoundTrip(state))
  t.same(reloaded.reports.current().stored(), state.reports.current().stored(), 'the same totals as the state rebuilt in its new zone')
})
