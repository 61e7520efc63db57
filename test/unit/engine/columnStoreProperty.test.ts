/*
 * The column store against a reference model (design §11): random
 * sequences of writes (creates, updates, trash and restore as a change of
 * trashItem, removals), write transactions that commit, roll back whole or
 * to a savepoint, snapshots taken while writes go on, reloads from a
 * snapshot and replays of the log, run on a TenantState and on a plain
 * Map of objects per resource. After every step every read must agree:
 * each record by id (also ids that are not UUIDs, and values the columns do
 * not hold by type: a text in a number field, a field the declaration does
 * not have, a declared field the record lacks), the records in order,
 * index lookups (in the collection's order, or for a collection with an
 * index order in no promised order), reads in date order, range walks, filtered and sorted
 * lists through the planner, and summaries.
 *
 * The model applies the same primitive operations with a Map's semantics
 * (a replaced record keeps its place, a new one comes last, a rollback
 * applies the inverses in reverse), which is the engine's order promise.
 * A snapshot is checked two ways: taken frozen while later writes change
 * the state (it must still give the records of its moment, byte for byte
 * the snapshot of that moment, and, written as columns (format 6), it must
 * load that moment's state), and loaded back (written as columns, every
 * collection with a record; the loaded state must answer as the model). A replay of every committed entry must give the
 * same state; byte for byte the same snapshot unless a removal was rolled
 * back (a rolled-back removal puts the record back last, live; the log
 * never saw it: that order difference predates the column store).
 */
import t from 'tap'
import fc from 'fast-check'
import { isDeepStrictEqual } from 'node:util'
import { Project } from '../../../src/domain/resources/project.js'
import { TimeRecord } from '../../../src/domain/resources/timeRecord.js'
import { buildRecord, inRecordShape } from '../../../src/domain/recordMaking.js'
import type { Rec, ResourceDecl } from '../../../src/domain/schema.js'
import { LOG_ENTRY_FORMAT, type Op } from '../../../src/engine/logEntry.js'
import { TenantState } from '../../../src/engine/tenantState.js'
import { WriteTx } from '../../../src/engine/writeTx.js'
import { decodeLogEntry, encodeLogEntry } from '../../../src/persist/codec.js'
import { encodeSnapshot } from '../../../src/persist/snapshotFile.js'
import { decodeSnapshot } from '../../../src/persist/snapshotReading.js'
import { parseSummary, runSummary, summaryOfBlocksSteps } from '../../../src/query/summary.js'
import { runNow } from '../../../src/engine/steps.js'
import { planList } from '../../../src/query/plan.js'
import { compileFilter } from '../../../src/query/filterCompiler.js'
import { loadSnapshotBody, snapshotBodyOf, snapshotSourceOf } from '../../../src/tenants/recovery.js'

const DAY_MS = 86_400_000
const BASE_MS = 1_700_000_000_000
const USERS = ['7d0f2b64-1c1e-4a43-9c1f-000000000001', '7d0f2b64-1c1e-4a43-9c1f-000000000002', 'a-user-that-is-no-uuid']
const PROJECTS = ['0a1b2c3d-0000-4000-8000-00000000000a', '0a1b2c3d-0000-4000-8000-00000000000b', '0A1B2C3D-0000-4000-8000-00000000000C']
const TAGS = ['11111111-2222-4333-8444-555555555555', '11111111-2222-4333-8444-666666666666']
const DESCRIPTIONS = ['Support call', 'Code review', '', 'ünïcödé \u{1F600}', 'x'.repeat(300)]
const TYPES = [TimeRecord, Project] as const

const idArb = fc.oneof(
  fc.uuid().map((id) => id.toLowerCase()),
  fc.uuid().map((id) => id.toUpperCase()),
  fc.integer({ min: 0, max: 40 }).map((n) => `r${n}`),
)

/** A value the field's column does not hold by type (kept aside, exactly). */
const misfitArb = fc.oneof(fc.constant('not a number'), fc.constant(42), fc.constant(true), fc.constant({ nested: [1, 2] }), fc.constant(Number.POSITIVE_INFINITY))

const numberArb = fc.oneof(
  fc.constant(null),
  fc.integer({ min: -1000, max: 4 * 3_600_000 }),
  fc.constant(2 ** 31),
  // Not -0: the log's encoding writes it as 0 (msgpack), so a replay would differ from the live state before any column.
  fc.double({ min: -1e6, max: 1e6, noNaN: true, noDefaultInfinity: true }).map((value) => (Object.is(value, -0) ? 0 : value)),
)

const timeRecordValuesArb = fc.record(
  {
    user: fc.constantFrom(...USERS, null),
    project: fc.constantFrom(...PROJECTS, null),
    start: fc.oneof(
      fc.constant(null),
      fc.integer({ min: 0, max: 20 * DAY_MS }).map((ms) => BASE_MS + ms),
      fc.constantFrom(BASE_MS, BASE_MS + DAY_MS),
    ),
    duration: numberArb,
    description: fc.oneof(fc.constantFrom(...DESCRIPTIONS, null), fc.string({ maxLength: 12 })),
    billable: fc.constantFrom(true, false, null),
    price: numberArb,
    tags: fc.oneof(fc.constant(null), fc.constant([]), fc.subarray(TAGS)),
    recordType: misfitArb,
    extraField: fc.constantFrom('kept aside', 7),
  },
  { requiredKeys: ['user', 'project', 'start', 'description'] },
)

const projectValuesArb = fc.record(
  {
    name: fc.constantFrom('Alpha', 'Beta', null),
    client: fc.constantFrom(...PROJECTS, null),
    owner: fc.constantFrom(...USERS, null),
    begins: fc.oneof(
      fc.constant(null),
      fc.integer({ min: 0, max: 5 * DAY_MS }).map((ms) => BASE_MS + ms),
    ),
    timeBudget: numberArb,
    active: fc.constantFrom(true, false, null, 'yes'),
  },
  { requiredKeys: [] },
)

type Write = { kind: 'put'; type: 0 | 1; pick: number; newId: string | null; values: Record<string, unknown>; drop: string | null; trash: boolean | null } | { kind: 'del'; type: 0 | 1; pick: number }

const writeArb: fc.Arbitrary<Write> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('put' as const),
      type: fc.constant(0 as const),
      pick: fc.nat(),
      newId: fc.option(idArb, { freq: 2 }),
      values: timeRecordValuesArb,
      drop: fc.option(fc.constantFrom('stop', 'approved', 'workType'), { freq: 4 }),
      trash: fc.option(fc.boolean(), { freq: 3 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('put' as const),
      type: fc.constant(1 as const),
      pick: fc.nat(),
      newId: fc.option(idArb, { freq: 2 }),
      values: projectValuesArb,
      drop: fc.constant(null),
      trash: fc.option(fc.boolean(), { freq: 3 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('del' as const), type: fc.constantFrom(0 as const, 1 as const), pick: fc.nat() }) },
)

type Step =
  | { kind: 'write'; write: Write }
  | { kind: 'tx'; writes: Write[]; end: 'commit' | 'rollback' | 'savepoint'; savepointAfter: number }
  | { kind: 'frozenSnapshot'; writes: Write[] }
  | { kind: 'reload' }
  | { kind: 'replay' }

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 10, arbitrary: writeArb.map((write) => ({ kind: 'write' as const, write })) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('tx' as const),
      writes: fc.array(writeArb, { minLength: 1, maxLength: 5 }),
      end: fc.constantFrom('commit' as const, 'rollback' as const, 'savepoint' as const),
      savepointAfter: fc.nat(5),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('frozenSnapshot' as const), writes: fc.array(writeArb, { maxLength: 6 }) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'reload' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'replay' as const }) },
)

/** The model: a Map of records per type, with a Map's order (see the top). */
class Model {
  readonly byType = new Map<string, Map<string, Rec>>(TYPES.map((decl) => [decl.type, new Map()]))

  of(type: string): Map<string, Rec> {
    return this.byType.get(type) as Map<string, Rec>
  }

  apply(op: Op): Op {
    const records = this.of(op.type)
    if (op.op === 'put') {
      const before = records.get(op.rec.id)
      records.set(op.rec.id, op.rec)
      return before === undefined ? { op: 'del', type: op.type, id: op.rec.id } : { op: 'put', type: op.type, rec: before }
    }
    const before = records.get(op.id) as Rec
    records.delete(op.id)
    return { op: 'put', type: op.type, rec: before }
  }
}

/** The operation a write makes against the current model (undefined: nothing to change or remove). */
function opOf(write: Write, model: Model, now: number): Op | undefined {
  const decl: ResourceDecl = TYPES[write.type]
  const held = [...model.of(decl.type).values()]
  if (write.kind === 'del') {
    const victim = held[write.pick % Math.max(1, held.length)]
    return victim === undefined ? undefined : { op: 'del', type: decl.type, id: victim.id }
  }
  const before = write.newId === null ? held[write.pick % Math.max(1, held.length)] : undefined
  const id = before?.id ?? write.newId ?? `fallback-${write.pick}`
  const { extraField, ...declared } = write.values
  const base = before === undefined ? buildRecord(decl, { ...declared, id }, now) : { ...before, ...declared, version: before.version + 1, updatedAt: now }
  const rec: Rec = { ...base }
  if (write.trash !== null) rec.trashItem = write.trash ? (TAGS[0] as string) : null
  if (extraField !== undefined) (rec as Record<string, unknown>).extraField = extraField
  if (write.drop !== null) delete (rec as Record<string, unknown>)[write.drop]
  return { op: 'put', type: decl.type, rec }
}

const caller = { userId: USERS[0] as string, superuser: true }
const FILTERS = [
  null,
  `user/id eq '${USERS[0]}'`,
  `project/id eq '${PROJECTS[1]}' and start ge datetime'2023-11-16T00:00:00Z'`,
  "substringof('o', description)",
  'billable eq true or price gt 10',
  'duration lt 1000 and not (billable eq false)',
  'trashItem eq null',
]
const ORDERS = [undefined, 'start desc', 'duration,description desc', 'price']
const SUMMARIES = ['count()', 'user/id;count();sum(duration);max(start)', 'description;count();avg(price)']

function sameRecords(a: readonly Rec[], b: readonly Rec[]): boolean {
  return a.length === b.length && a.every((rec, at) => isDeepStrictEqual(rec, b[at]))
}

/** Every read of `state` agrees with the model (each record through `shape`); the first disagreement, or null. */
function disagreement(state: TenantState, model: Model, shape: (decl: ResourceDecl, rec: Rec) => Rec = (_, rec) => rec): string | null {
  for (const decl of TYPES) {
    const collection = state.collection(decl.type)
    const expected = [...model.of(decl.type).values()].map((rec) => shape(decl, rec))
    if (collection.size !== expected.length) return `${decl.type}: ${collection.size} records, the model ${expected.length}`
    for (const rec of expected)
      if (!isDeepStrictEqual(state.get(decl.type, rec.id), rec)) return `${decl.type} ${rec.id}: ${JSON.stringify(state.get(decl.type, rec.id))} is not ${JSON.stringify(rec)}`
    // While nothing changes, a record read again is the very object read before (rendered JSON is kept by it).
    // biome-ignore lint/suspicious/noSelfCompare: two reads of the same record compared: the point is that they are one object
    for (const rec of expected) if (state.get(decl.type, rec.id) !== state.get(decl.type, rec.id)) return `${decl.type} ${rec.id}: read twice, two objects`
    if (!sameRecords([...collection.values()], expected)) return `${decl.type}: the records in order differ`
    const indexed =
      decl === TimeRecord
        ? ([
            ['user', USERS],
            ['project', PROJECTS],
          ] as const)
        : ([
            ['client', PROJECTS],
            ['owner', USERS],
          ] as const)
    for (const [field, values] of indexed) {
      for (const value of [...values, 'nobody']) {
        // A key kept in date order (TimeRecord's indexOrder) gives its records in that order once read in it: compared by id.
        const byId = (recs: Rec[]) => (decl.indexOrder === null ? recs : recs.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)))
        if (!sameRecords(byId([...collection.lookup(field, value)]), byId(expected.filter((rec) => rec[field] === value)))) return `${decl.type}: lookup ${field} = ${value}`
        if (decl !== TimeRecord) continue
        for (const descending of [false, true]) {
          const ordered = collection.orderedLookup(field, value, 'start', descending)
          const sortKey = (rec: Rec) => (typeof rec.start === 'number' ? rec.start : Number.NEGATIVE_INFINITY)
          const wanted = expected
            .filter((rec) => rec[field] === value)
            .sort((a, b) => (sortKey(a) !== sortKey(b) ? (sortKey(a) < sortKey(b) ? -1 : 1) * (descending ? -1 : 1) : a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
          if (ordered !== null && !sameRecords([...ordered], wanted)) return `${decl.type}: ${field} = ${value} in start order (descending ${descending})`
        }
      }
    }
    const rangeField = decl === TimeRecord ? 'start' : 'begins'
    const walked = [...(collection.rangeIndexes.get(rangeField)?.walk({ lowInclusive: true, highInclusive: true }, false) ?? [])].map((rec) => rec.id).sort()
    if (!isDeepStrictEqual(walked, expected.map((rec) => rec.id).sort())) return `${decl.type}: the ${rangeField} index walks other records`
  }
  const times = [...model.of('TimeRecord').values()].map((rec) => shape(TimeRecord, rec))
  for (const filter of FILTERS) {
    const compiled = filter === null ? null : compileFilter(TimeRecord, filter)
    const matching = times.filter((rec) => rec.trashItem === null && (compiled === null || compiled.test(rec, state)))
    for (const order of ORDERS) {
      const query = new Map<string, string>()
      if (filter !== null) query.set('$filter', filter)
      if (order !== undefined) query.set('$orderby', order)
      query.set('$top', '7')
      const plan = planList(TimeRecord, query)
      const page = plan.run(state, caller, { kind: 'all' })
      const all = planList(TimeRecord, new Map([...query].filter(([name]) => name !== '$top'))).run(state, caller, { kind: 'all' })
      if (!isDeepStrictEqual(new Set(all.map((rec) => rec.id)), new Set(matching.map((rec) => rec.id)))) return `list ${filter} ${order}: other records`
      if (!sameRecords(page, all.slice(0, 7))) return `list ${filter} ${order}: the page is not the first of the whole list`
      // Unsorted, a whole-collection list comes in the collection's order (a list read through an index: in the index's).
      if (order === undefined && filter === null && !sameRecords(all, matching)) return `list ${filter}: not in the collection's order`
      if (plan.count(state, caller, { kind: 'all' }) !== matching.length) return `count ${filter}`
    }
    for (const summary of SUMMARIES) {
      const plan = planList(TimeRecord, new Map(filter === null ? [] : [['$filter', filter]]))
      const got = runNow(summaryOfBlocksSteps(parseSummary(TimeRecord, summary), (visit) => plan.eachMatchingBlock(state, caller, { kind: 'all' }, visit), state))
      const wanted = runSummary(parseSummary(TimeRecord, summary), matching, state)
      if (!isDeepStrictEqual(got, wanted)) return `summary ${summary} of ${filter}: ${JSON.stringify(got)} is not ${JSON.stringify(wanted)}`
    }
  }
  return null
}

function bytesOf(state: TenantState): Buffer {
  return encodeSnapshot(state.tenant, state.seq, 0, snapshotBodyOf(state))
}

/** The state loaded from `bytes`. */
function loaded(tenant: string, bytes: Buffer): TenantState {
  const fresh = new TenantState(tenant)
  const { header, body } = decodeSnapshot(bytes)
  loadSnapshotBody(fresh, body)
  fresh.seq = header.seq
  return fresh
}

/** The state reloaded from a snapshot of it that writes every collection with a record as columns (format 6). */
function reloaded(state: TenantState): TenantState {
  const { source, release } = snapshotSourceOf(state)
  try {
    const bytes = encodeSnapshot(state.tenant, state.seq, 0, { ...source, columnsFrom: 1 })
    if (source.pool !== undefined && Object.keys(source.collections).length > 0 && decodeSnapshot(bytes).body.columns?.tables.length === 0) throw new Error('a reload goes through columns')
    return loaded(state.tenant, bytes)
  } finally {
    release()
  }
}

const RUNS = Number(process.env.COLUMN_STORE_RUNS ?? 25)

t.test('the column store answers every read as a Map of objects does, through writes, rollbacks, snapshots and replays', async (t) => {
  let checked = 0
  fc.assert(
    fc.property(fc.array(stepArb, { minLength: 5, maxLength: 40, size: 'max' }), (steps) => {
      let state = new TenantState('acme')
      const model = new Model()
      const log: Buffer[] = []
      let rolledBackRemoval = false
      let droppedField = false
      let now = BASE_MS
      const commit = (ops: readonly Op[]) => {
        if (ops.length === 0) return
        log.push(encodeLogEntry({ v: LOG_ENTRY_FORMAT, at: now, ops: [...ops] }))
        state.seq += 1
      }
      const run = (tx: WriteTx, write: Write): Op | undefined => {
        const op = opOf(write, model, now)
        if (op === undefined) return undefined
        if (write.kind === 'put' && write.drop !== null) droppedField = true
        if (op.op === 'put') tx.put(op.type, op.rec)
        else tx.del(op.type, op.id)
        return model.apply(op)
      }
      for (const step of steps) {
        now += 1000
        if (step.kind === 'write') {
          const tx = new WriteTx(state, now)
          run(tx, step.write)
          commit(tx.ops)
        } else if (step.kind === 'tx') {
          const tx = new WriteTx(state, now)
          const inverses: Op[] = []
          const kinds: string[] = []
          let savepoint = -1
          let savepointInverses = 0
          step.writes.forEach((write, index) => {
            if (step.end === 'savepoint' && index === step.savepointAfter % step.writes.length) {
              savepoint = tx.savepoint()
              savepointInverses = inverses.length
            }
            const inverse = run(tx, write)
            if (inverse !== undefined) {
              inverses.push(inverse)
              kinds.push(write.kind)
            }
          })
          if (step.end === 'commit') commit(tx.ops)
          else {
            const keep = step.end === 'rollback' || savepoint < 0 ? 0 : savepointInverses
            if (step.end === 'rollback' || savepoint < 0) tx.rollback()
            else tx.rollbackTo(savepoint)
            while (inverses.length > keep) {
              if (kinds.pop() === 'del') rolledBackRemoval = true
              model.apply(inverses.pop() as Op)
            }
            if (step.end === 'savepoint') commit(tx.ops)
          }
        } else if (step.kind === 'frozenSnapshot') {
          const moment = bytesOf(state)
          const { source, release } = snapshotSourceOf(state)
          for (const write of step.writes) {
            const tx = new WriteTx(state, now)
            run(tx, write)
            commit(tx.ops)
          }
          const momentSeq = decodeSnapshot(moment).header.seq
          const frozen = encodeSnapshot(state.tenant, momentSeq, 0, source)
          const frozenColumns = encodeSnapshot(state.tenant, momentSeq, 0, { ...source, columnsFrom: 1 })
          release()
          if (!frozen.equals(moment)) throw new Error('a frozen snapshot gives the records of its moment, byte for byte, whatever was written after it')
          // Stored as columns, the frozen arrays' last chunks may hold rows written after the moment: the state they load must be the moment's.
          if (!bytesOf(loaded(state.tenant, frozenColumns)).equals(moment)) throw new Error("a frozen snapshot's columns load the state of its moment, whatever was written after it")
        } else if (step.kind === 'reload') state = reloaded(state)
        else {
          const replayed = new TenantState(state.tenant)
          for (const [index, bytes] of log.entries()) replayed.applyEntry(index + 1, decodeLogEntry(bytes))
          // As recovery ends a replay: the observers see the rows it inserted, the collections index them.
          replayed.finishLoad()
          // The log gives a declared field a record lacks its default (recordMaking.ts recordFromFields): so does the model here.
          const problem = disagreement(replayed, model, inRecordShape)
          if (problem !== null && !rolledBackRemoval) throw new Error(`a replay of the log answers as the model: ${problem}`)
          if (!rolledBackRemoval && !droppedField && !bytesOf(replayed).equals(bytesOf(state))) throw new Error('a replayed state snapshots byte for byte as the live one')
        }
        const problem = disagreement(state, model)
        if (problem !== null) throw new Error(`after ${step.kind}: ${problem.slice(0, 2000)}`)
        checked += 1
      }
      return true
    }),
    { numRuns: RUNS, seed: process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED) },
  )
  t.pass(`${RUNS} random runs, ${checked} steps checked against the model`)
})
