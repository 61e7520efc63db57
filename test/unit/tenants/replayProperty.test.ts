/*
 * Recovery's replay of the log against the state that wrote it: random
 * sequences of writes (time records and projects created, changed, trashed
 * and restored as a change of trashItem, removed; the account's time zone
 * changed; entries of several operations; records with a field their
 * declaration does not have), each committed as the actor commits it (one
 * log entry of the write transaction's operations, appended to a real LMDB
 * log), then the tenant rebuilt by recoverTenantInTurns from an empty
 * snapshot directory. The replay writes a new record's logged fields to the
 * columns without making it and lets the observers (report totals, append
 * counters) see the new rows later in bulk (TenantState.applyEntry); every
 * read must still answer as the written state does: the records in order and
 * by id, index lookups and reads in date order, range walks, filtered and
 * sorted lists, summaries, the report totals overall, per project and per
 * user, and the append counters.
 *
 * A damaged entry (one that removes a record that is not there) appended at
 * a random point stops the replay with a DamagedEntryError naming the tenant
 * and its sequence number, and a recovery up to the entry before it
 * (`uptoSeq`) answers as the state was then.
 */
import t from 'tap'
import fc from 'fast-check'
import { isDeepStrictEqual } from 'node:util'
import { loadConfig } from '../../../src/config.js'
import { Account } from '../../../src/domain/resources/account.js'
import { Project } from '../../../src/domain/resources/project.js'
import { TimeRecord } from '../../../src/domain/resources/timeRecord.js'
import { buildRecord } from '../../../src/domain/recordMaking.js'
import type { Rec, ResourceDecl } from '../../../src/domain/schema.js'
import { LOG_ENTRY_FORMAT } from '../../../src/engine/logEntry.js'
import { runNow } from '../../../src/engine/steps.js'
import { TenantState } from '../../../src/engine/tenantState.js'
import { WriteTx } from '../../../src/engine/writeTx.js'
import { decodeLogEntry, encodeLogEntry } from '../../../src/persist/codec.js'
import { EmbeddedStorage } from '../../../src/persist/embeddedStorage.js'
import { parseSummary, summaryOfBlocksSteps } from '../../../src/query/summary.js'
import { planList } from '../../../src/query/plan.js'
import { DamagedEntryError, recoverTenant, recoverTenantInTurns, snapshotBodyOf } from '../../../src/tenants/recovery.js'
import { tempDataDir, testEnv } from '../../helpers/server.js'

const DAY_MS = 86_400_000
const BASE_MS = 1_700_000_000_000
const TENANT = 'acme'
const USERS = ['7d0f2b64-1c1e-4a43-9c1f-000000000001', '7d0f2b64-1c1e-4a43-9c1f-000000000002', 'a-user-that-is-no-uuid']
const PROJECTS = ['0a1b2c3d-0000-4000-8000-00000000000a', '0a1b2c3d-0000-4000-8000-00000000000b']
const TRASH = '11111111-2222-4333-8444-555555555555'
const ZONES = ['UTC', 'Europe/Berlin', 'America/New_York']

const timeValuesArb = fc.record({
  user: fc.constantFrom(...USERS, null),
  project: fc.constantFrom(...PROJECTS, null),
  start: fc.oneof(
    fc.constant(null),
    fc.integer({ min: 0, max: 40 * DAY_MS }).map((ms) => BASE_MS + ms),
  ),
  duration: fc.oneof(fc.constant(null), fc.integer({ min: 0, max: 8 * 3_600_000 })),
  description: fc.constantFrom('Support call', 'Code review', 'ünïcödé', null),
  billable: fc.constantFrom(true, false, null),
  effective: fc.constantFrom(true, false, null),
  price: fc.oneof(
    fc.constant(null),
    fc.integer({ min: 0, max: 100_000 }).map((cents) => cents / 100),
  ),
})

type Write =
  | { kind: 'create'; values: Record<string, unknown>; extra: boolean }
  | { kind: 'change'; pick: number; values: Record<string, unknown> }
  | { kind: 'trash'; pick: number; trashed: boolean }
  | { kind: 'remove'; pick: number }
  | { kind: 'project'; pick: number; name: string }
  | { kind: 'zone'; zone: string }

const writeArb: fc.Arbitrary<Write> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({ kind: fc.constant('create' as const), values: timeValuesArb, extra: fc.oneof({ weight: 4, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }) }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('change' as const), pick: fc.nat(), values: timeValuesArb }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('trash' as const), pick: fc.nat(), trashed: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('remove' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('project' as const), pick: fc.nat(), name: fc.constantFrom('Alpha', 'Beta') }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('zone' as const), zone: fc.constantFrom(...ZONES) }) },
)

/** Writes the actor would commit one at a time, or a few in one transaction (one entry of several operations). */
const entriesArb = fc.array(fc.array(writeArb, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 60 })

/** Applies a write on the transaction, as a domain operation would put and remove records. */
function apply(tx: WriteTx, state: TenantState, write: Write, now: number): void {
  const held = (decl: ResourceDecl) => [...state.collection(decl.type).values()]
  const pick = (decl: ResourceDecl, at: number): Rec | undefined => {
    const records = held(decl)
    return records[at % Math.max(1, records.length)]
  }
  if (write.kind === 'create') {
    const rec: Rec = buildRecord(TimeRecord, write.values, now)
    // A field the declaration does not have (data written before a field was dropped): the record is made whole on replay.
    if (write.extra) (rec as Record<string, unknown>).retiredField = 'kept aside'
    tx.put(TimeRecord.type, rec)
  } else if (write.kind === 'change' || write.kind === 'trash') {
    const before = pick(TimeRecord, write.pick)
    if (before === undefined) return
    const changed = write.kind === 'change' ? write.values : { trashItem: write.trashed ? TRASH : null }
    tx.put(TimeRecord.type, { ...before, ...changed, version: before.version + 1, updatedAt: now })
  } else if (write.kind === 'remove') {
    const before = pick(TimeRecord, write.pick)
    if (before !== undefined) tx.del(TimeRecord.type, before.id)
  } else if (write.kind === 'project') {
    const id = PROJECTS[write.pick % PROJECTS.length] as string
    const before = state.get(Project.type, id)
    tx.put(Project.type, before === undefined ? buildRecord(Project, { id, name: write.name }, now) : { ...before, name: write.name, version: before.version + 1 })
  } else {
    const before = held(Account)[0]
    tx.put(Account.type, before === undefined ? buildRecord(Account, { timeZone: write.zone }, now) : { ...before, timeZone: write.zone, version: before.version + 1 })
  }
}

const caller = { userId: USERS[0] as string, superuser: true }
const FILTERS = [null, `user/id eq '${USERS[1]}'`, `project/id eq '${PROJECTS[0]}' and billable eq true`, "substringof('o', description)", 'trashItem eq null']
const ORDERS = [undefined, 'start desc', 'duration,description desc']
const SUMMARIES = ['count()', 'user/id;count();sum(duration);max(start)', 'project/id;count();sum(price)']

const ids = (recs: Iterable<Rec> | null): string[] => [...(recs ?? [])].map((rec) => rec.id)

/**
 * The first read on which `replayed` answers otherwise than `written`, or null. `writtenBody`: what a snapshot of
 * `written` kept before any read of it (a read of report totals waiting for a rebuild rebuilds them).
 */
function difference(replayed: TenantState, written: TenantState, writtenBody: unknown): string | null {
  if (!isDeepStrictEqual(snapshotBodyOf(replayed), writtenBody)) return 'the records in order and the stored report totals'
  for (const decl of [TimeRecord, Project, Account]) {
    const [a, b] = [replayed.collection(decl.type), written.collection(decl.type)]
    for (const rec of b.values()) if (!isDeepStrictEqual(a.get(rec.id), rec)) return `${decl.type} ${rec.id} by id`
  }
  const [a, b] = [replayed.collection(TimeRecord.type), written.collection(TimeRecord.type)]
  for (const [field, values] of [
    ['user', USERS],
    ['project', PROJECTS],
  ] as const) {
    for (const value of [...values, null]) {
      if (!isDeepStrictEqual(ids(a.lookup(field, value)).sort(), ids(b.lookup(field, value)).sort())) return `lookup ${field} = ${value}`
      if (value === null) continue
      for (const descending of [false, true]) {
        if (!isDeepStrictEqual(ids(a.orderedLookup(field, value, 'start', descending)), ids(b.orderedLookup(field, value, 'start', descending)))) return `${field} = ${value} by start`
      }
    }
  }
  const walk = (collection: typeof a) => ids(collection.rangeIndexes.get('start')?.walk({ lowInclusive: true, highInclusive: true }, true) ?? [])
  if (!isDeepStrictEqual(walk(a), walk(b))) return 'the start range index'
  for (const filter of FILTERS) {
    for (const order of ORDERS) {
      const query = new Map<string, string>()
      if (filter !== null) query.set('$filter', filter)
      if (order !== undefined) query.set('$orderby', order)
      const plan = planList(TimeRecord, query)
      if (!isDeepStrictEqual(plan.run(replayed, caller, { kind: 'all' }), plan.run(written, caller, { kind: 'all' }))) return `list ${filter} ${order}`
    }
    const plan = planList(TimeRecord, new Map(filter === null ? [] : [['$filter', filter]]))
    for (const summary of SUMMARIES) {
      const of = (state: TenantState) => runNow(summaryOfBlocksSteps(parseSummary(TimeRecord, summary), (visit) => plan.eachMatchingBlock(state, caller, { kind: 'all' }, visit), state))
      if (!isDeepStrictEqual(of(replayed), of(written))) return `summary ${summary} of ${filter}`
    }
  }
  const [ra, rb] = [replayed.reports.current(), written.reports.current()]
  if (ra.timeZone !== rb.timeZone || !isDeepStrictEqual(ra.stored(), rb.stored())) return 'the report totals'
  if (!isDeepStrictEqual(ra.overall.sum(null, null), rb.overall.sum(null, null))) return 'the report totals overall'
  for (const key of [...PROJECTS, 'null']) if (!isDeepStrictEqual(ra.byProject.get(key)?.sum(null, null), rb.byProject.get(key)?.sum(null, null))) return `the report totals of project ${key}`
  for (const key of [...USERS, 'null']) if (!isDeepStrictEqual(ra.byUser.get(key)?.sum(null, null), rb.byUser.get(key)?.sum(null, null))) return `the report totals of user ${key}`
  for (const project of PROJECTS) {
    for (const viewer of USERS) {
      const count = (state: TenantState) => state.aggregates.count('Project', 'timerecords-count', project, viewer)
      if (count(replayed) !== count(written)) return `the time records counted for project ${project}`
    }
  }
  return null
}

const RUNS = Number(process.env.REPLAY_PROPERTY_RUNS ?? 20)

t.test('a replay of the log answers every read as the state that wrote it', async (t) => {
  const config = loadConfig(testEnv(tempDataDir('replay-property')))
  const store = EmbeddedStorage.open(config.dataDir, config.lmdbMapSizeBytes)
  t.teardown(() => store.close())
  let tenantNumber = 0
  let checked = 0
  await fc.assert(
    fc.asyncProperty(entriesArb, fc.option(fc.nat(), { freq: 3 }), async (entries, damagedAt) => {
      tenantNumber += 1
      const tenant = `${TENANT}${tenantNumber}`
      const written = new TenantState(tenant)
      let now = BASE_MS
      for (const writes of entries) {
        now += 1000
        const tx = new WriteTx(written, now)
        for (const write of writes) apply(tx, written, write, now)
        if (tx.ops.length === 0) continue
        written.seq += 1
        await store.append(tenant, written.seq, { v: LOG_ENTRY_FORMAT, at: now, ops: [...tx.ops], by: null })
      }
      const writtenBody = snapshotBodyOf(written)
      const { state: replayed, report } = await recoverTenantInTurns(tenant, store)
      if (report.replayedEntries !== written.seq) throw new Error(`${report.replayedEntries} entries replayed, ${written.seq} written`)
      const problem = difference(replayed, written, writtenBody)
      if (problem !== null) throw new Error(`the replayed state answers otherwise: ${problem}`)
      if (replayed.seq !== written.seq) throw new Error(`replayed to ${replayed.seq}, written to ${written.seq}`)
      if (damagedAt !== null) {
        const seq = written.seq + 1
        await store.append(tenant, seq, { v: LOG_ENTRY_FORMAT, at: now, ops: [{ op: 'del', type: TimeRecord.type, id: 'never-there' }], by: null })
        try {
          recoverTenant(tenant, store)
          throw new Error('a damaged entry went unnoticed')
        } catch (error) {
          if (!(error instanceof DamagedEntryError) || error.tenant !== tenant || error.seq !== seq) throw error
        }
        const upto = recoverTenant(tenant, store, { uptoSeq: written.seq }).state
        const uptoProblem = difference(upto, written, writtenBody)
        if (uptoProblem !== null) throw new Error(`recovered up to the entry before the damaged one, the state answers otherwise: ${uptoProblem}`)
      }
      checked += 1
      return true
    }),
    { numRuns: RUNS, seed: process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED) },
  )
  t.pass(`${checked} random logs replayed and compared read by read`)
})

t.test('a long log of new time records: the observers see them in runs during the replay and in steps at its end', async (t) => {
  const config = loadConfig(testEnv(tempDataDir('replay-long')))
  const store = EmbeddedStorage.open(config.dataDir, config.lmdbMapSizeBytes)
  t.teardown(() => store.close())
  const written = new TenantState(TENANT)
  const direct = new TenantState(TENANT)
  // More than the replay lets wait before it shows them (16,384) and than one step shows (65,536).
  const count = 70_000
  const appended: Promise<number>[] = []
  for (let index = 0; index < count; index += 1) {
    const now = BASE_MS + index
    const tx = new WriteTx(written, now)
    const values = {
      user: USERS[index % USERS.length],
      project: PROJECTS[index % PROJECTS.length],
      start: BASE_MS + (index % 40) * DAY_MS,
      duration: index % 7_200_000,
      billable: index % 3 === 0,
      price: index % 1000,
    }
    tx.put(TimeRecord.type, buildRecord(TimeRecord, values, now))
    written.seq += 1
    const entry = { v: LOG_ENTRY_FORMAT, at: now, ops: [...tx.ops], by: null }
    appended.push(store.append(TENANT, written.seq, entry))
    direct.applyEntry(written.seq, decodeLogEntry(encodeLogEntry(entry)))
  }
  await Promise.all(appended)
  const writtenBody = snapshotBodyOf(written)
  direct.finishLoad()
  t.equal(difference(direct, written, writtenBody), null, 'entries applied one by one, then finishLoad (two steps of rows)')
  const { state: replayed } = await recoverTenantInTurns(TENANT, store)
  t.equal(difference(replayed, written, writtenBody), null, 'a recovery in turns')
  t.equal(replayed.reports.overall.size, count, 'every record counted once')
})
