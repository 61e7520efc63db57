/*
 * Differential test of the report aggregates: every report answered from
 * the live aggregates must equal the same report forced through the query
 * engine (a $filter that is always true but that the aggregates cannot
 * answer), over random data and random changes.
 *
 * A seeded PRNG (REPORTS_DIFF_SEED picks another seed) drives a tenant in a
 * non-UTC zone with four users, public projects, the owner's personal
 * project, another user's personal project (whose records the owner must
 * not see) and a project that switches between public and personal. A few
 * hundred records are created, then rounds of random operations — create,
 * update of start/duration/billable/project/user, delete to the trash,
 * restore, hard delete, $updateprice, price list and time zone changes —
 * and after each round every report (readtotals ungrouped and grouped by
 * project/id and user/id, groupedtotals, singletotals, trendedtotals,
 * singleslices, and the pinned `project/id eq` / `user/id eq` forms) is
 * compared for two viewers, the owner and that other user.
 *
 * It also checks that the aggregate path is really the one taken: the
 * reports code reads the aggregates (ReportAggregates.current) only once it
 * has decided to answer from them, so the test counts those reads.
 */
import t, { type Test } from 'tap'
import { isDeepStrictEqual } from 'node:util'
import { ReportAggregates } from '../../src/engine/reportTotals.js'
import { api, newUser, ref, type Api, type Query } from '../helpers/api.js'
import { Random } from '../helpers/fuzz.js'
import type { AnswerJson } from '../helpers/http.js'
import { startInProcess } from '../helpers/server.js'

const SEED = Number(process.env.REPORTS_DIFF_SEED ?? 20_261_124)
const ROUNDS = 6
const INITIAL_RECORDS = 300
const OPERATIONS_PER_ROUND = 40
const HOUR = 3_600_000
const DAY = 86_400_000
const ALWAYS_TRUE = 'duration ge 0 or duration eq null'
const ZONES = ['Europe/Berlin', 'Asia/Kathmandu', 'America/St_Johns', 'Pacific/Chatham', 'America/Los_Angeles']

const rng = new Random(SEED)
const random = () => rng.next()
const pick = <T>(items: readonly T[]): T => rng.pick(items)
const chance = (probability: number) => rng.chance(probability)

// Counts reads of the live aggregates: one per report answered from them.
let aggregateReads = 0
const readAggregates = ReportAggregates.prototype.current
ReportAggregates.prototype.current = function countedCurrent(this: ReportAggregates) {
  aggregateReads += 1
  return readAggregates.call(this)
}

// Thousands of report requests in seconds: no rate limit.
const server = await startInProcess(undefined, { RATE_LIMIT_REQUESTS: '0' })
t.teardown(() => server.stop())
const TENANT = 'diff'
const { client } = server
const ownerSession = await client.createTenant(TENANT)
const owner = api(client, TENANT, ownerSession.token)
const ownerId = ((await owner.get('users/@self')).json as { id: string }).id as string
const accountId = ownerSession.accountId
const bert = await newUser(client, TENANT, owner, 'Bert', { projectManager: true })
const cleo = await newUser(client, TENANT, owner, 'Cleo')
const dave = await newUser(client, TENANT, owner, 'Dave')
const users = [ownerId, bert.id, cleo.id, dave.id]

async function ok(response: Promise<{ status: number; text: string; json: AnswerJson }>, expected: number, what: string): Promise<AnswerJson> {
  const answer = await response
  if (answer.status !== expected) throw new Error(`${what}: ${answer.status} ${answer.text.slice(0, 300)} (seed ${SEED})`)
  return answer.json
}

await ok(owner.put(`accounts/${accountId}`, { timeZone: 'Europe/Berlin' }, { version_ignore: true }), 200, 'set the time zone')
const publicProjects = [await owner.create('time/projects', { name: 'P1' }), await owner.create('time/projects', { name: 'P2' })]
const switching = await owner.create('time/projects', { name: 'P3 sometimes personal' })
const ownerPersonal = await owner.create('time/projects', { name: 'Owner personal', personal: true })
const bertPersonal = await bert.api.create('time/projects', { name: 'Bert personal', personal: true, owner: ref(bert.id) })
/** Projects the owner writes records on (null: no project). */
const ownerProjects: (string | null)[] = [...publicProjects, switching, ownerPersonal, null]
const allProjects = [...publicProjects, switching, ownerPersonal, bertPersonal]
const globalPrice = await owner.create('billing/pricelists/time', { price: 50 })
const projectPrice = await owner.create('billing/pricelists/time', { price: 80, project: ref(publicProjects[0] as string) })
const userPrice = await owner.create('billing/pricelists/time', { price: 120, user: ref(cleo.id) })

interface Tracked {
  /** Records on Bert's personal project are written by Bert (the owner cannot see them), all others by the owner. */
  writer: Api
  trashItem: string | null
}
const records = new Map<string, Tracked>()
const writerOf = (project: string | null) => (project === bertPersonal ? bert.api : owner)

function randomDate(): string {
  return new Date(Date.UTC(2022, 11, 1) + Math.floor(random() * 950) * DAY).toISOString().slice(0, 10)
}

function randomFields(project: string | null): Record<string, unknown> {
  const fields: Record<string, unknown> = {
    user: ref(pick(users)),
    project: project === null ? null : ref(project),
    start: chance(0.04) ? null : new Date(Date.UTC(2023, 0, 1) + Math.floor(random() * 900 * DAY)).toISOString(),
    duration: chance(0.03) ? null : Math.floor(random() * 10 * HOUR),
    effective: chance(0.8),
  }
  const billable = random()
  if (billable < 0.5) fields.billable = true
  else if (billable < 0.75) fields.billable = false
  if (chance(0.25)) Object.assign(fields, { price: Math.round(random() * 50_000) / 100, priceModified: true })
  return fields
}

const randomProject = () => (chance(0.2) ? bertPersonal : pick(ownerProjects))

async function createRecords(count: number): Promise<void> {
  const byWriter = new Map<Api, unknown[]>()
  for (let index = 0; index < count; index += 1) {
    const project = randomProject()
    const items = byWriter.get(writerOf(project)) ?? []
    const calculate = chance(0.5) ? '&calculate_price=true' : ''
    items.push({ id: String(index), method: 'POST', path: `/v1/time/timerecords?response_object=false${calculate}`, body: JSON.stringify(randomFields(project)) })
    byWriter.set(writerOf(project), items)
  }
  for (const [writer, items] of byWriter) {
    for (let start = 0; start < items.length; start += 100) {
      const answers = await ok(writer.post('batch', items.slice(start, start + 100)), 200, 'batch of creations')
      for (const answer of answers as { code: number; body: string }[]) {
        if (answer.code !== 201) throw new Error(`batch create: ${answer.code} ${answer.body} (seed ${SEED})`)
        records.set(JSON.parse(answer.body).id as string, { writer, trashItem: null })
      }
    }
  }
}

const live = () => [...records.entries()].filter(([, tracked]) => tracked.trashItem === null)
const trashed = () => [...records.entries()].filter(([, tracked]) => tracked.trashItem !== null)

/** One random operation; returns its name. */
async function randomOperation(): Promise<string> {
  const choice = random()
  const candidates = live()
  if (choice < 0.15 || candidates.length === 0) {
    await createRecords(1)
    return 'create'
  }
  const [id, tracked] = pick(candidates)
  if (choice < 0.55) {
    const fields = randomFields(null)
    const change: Record<string, unknown> = {}
    for (const name of ['start', 'duration', 'billable', 'user'] as const) if (chance(0.4)) change[name] = fields[name] ?? null
    // The owner moves records between the projects it sees; Bert's records stay on his personal project.
    if (tracked.writer === owner && chance(0.4)) {
      const project = pick(ownerProjects)
      change.project = project === null ? null : ref(project)
    }
    const calculate: Query = chance(0.3) ? { calculate_price: true } : {}
    await ok(tracked.writer.put(`time/timerecords/${id}`, change, { version_ignore: true, ...calculate }), 200, `update ${JSON.stringify(change)}`)
    return 'update'
  }
  if (choice < 0.68) {
    const answer = await ok(tracked.writer.del(`time/timerecords/${id}`), 200, 'delete to the trash')
    tracked.trashItem = answer.trashItem.id as string
    return 'trash'
  }
  if (choice < 0.78 && trashed().length > 0) {
    const [, gone] = pick(trashed())
    await ok(gone.writer.get(`trash/${gone.trashItem}/$restore`), 200, 'restore')
    gone.trashItem = null
    return 'restore'
  }
  if (choice < 0.86) {
    if (chance(0.5) && trashed().length > 0) {
      const [goneId, gone] = pick(trashed())
      await ok(gone.writer.del(`trash/${gone.trashItem}`), 200, 'empty a trash item')
      records.delete(goneId)
    } else {
      await ok(tracked.writer.del(`time/timerecords/${id}`, { hard: true }), 200, 'hard delete')
      records.delete(id)
    }
    return 'hard delete'
  }
  await ok(tracked.writer.put(`time/timerecords/${id}/$updateprice`, {}), 200, '$updateprice')
  return '$updateprice'
}

/** Changes around the records: the time zone, prices, whether P3 is personal. */
async function changeSurroundings(round: number): Promise<string[]> {
  const done: string[] = []
  const zone = ZONES[round % ZONES.length] as string
  await ok(owner.put(`accounts/${accountId}`, { timeZone: zone }, { version_ignore: true }), 200, 'time zone change')
  done.push(`zone ${zone}`)
  const personal = round % 2 === 1
  await ok(owner.put(`time/projects/${switching}`, { personal }, { version_ignore: true }), 200, 'P3 personal')
  done.push(`P3 personal ${personal}`)
  for (const list of [globalPrice, projectPrice, userPrice]) {
    await ok(owner.put(`billing/pricelists/time/${list}`, { price: Math.round(random() * 20_000) / 100 }, { version_ignore: true }), 200, 'price change')
  }
  return done
}

function randomRanges(): Query[] {
  const from = randomDate()
  const to = new Date(Date.parse(from) + Math.floor(random() * 120) * DAY).toISOString().slice(0, 10)
  return [
    { range: 0 },
    { range: 1, range_from: randomDate() },
    { range: 7, range_from: randomDate(), offset: Math.floor(random() * 7) - 3 },
    { range: 31, range_from: from, ...(chance(0.5) ? { range_to: to } : {}) },
    { range: 365, range_from: randomDate(), offset: Math.floor(random() * 3) - 1 },
    { range: 999, range_from: from, range_to: to, offset: Math.floor(random() * 5) - 2 },
  ]
}

interface Comparison {
  report: string
  query: Query
  /** A filter the aggregates answer, or none. */
  pin?: string
}

function comparisons(range: Query): Comparison[] {
  const pinnedProject = `project/id eq '${pick([...allProjects, 'null'])}'`
  const pinnedUser = `user/id eq '${pick(users)}'`
  const list: Comparison[] = [
    { report: 'readtotals', query: range },
    { report: 'readtotals', query: { ...range, summary: 'project/id' } },
    { report: 'readtotals', query: { ...range, summary: 'user/id' } },
    { report: 'groupedtotals', query: { ...range, summary: 'project/id' } },
    { report: 'groupedtotals', query: { ...range, summary: 'user/id' } },
    { report: 'singletotals', query: range },
    { report: 'singletotals', query: range, pin: pinnedProject },
    { report: 'singletotals', query: range, pin: pinnedUser },
    { report: 'readtotals', query: { ...range, summary: 'user/id' }, pin: pinnedUser },
    { report: 'readtotals', query: { ...range, summary: 'project/id' }, pin: pinnedProject },
  ]
  if (range.range !== 0) {
    list.push({ report: 'trendedtotals', query: { ...range, depth: 6 } })
    list.push({ report: 'trendedtotals', query: { ...range, depth: 3 }, pin: pinnedProject })
    list.push({ report: 'singleslices', query: range })
    if (range.range === 365) list.push({ report: 'singleslices', query: { ...range, slice_by: 7 } })
    list.push({ report: 'singleslices', query: range, pin: pinnedUser })
  }
  return list
}

interface Mismatch {
  what: string
  aggregated: unknown
  scanned: unknown
}

async function compareAll(t: Test, label: string): Promise<void> {
  const mismatches: Mismatch[] = []
  const notFromAggregates: string[] = []
  let compared = 0
  let nonEmpty = 0
  for (const viewer of [
    { name: 'owner', api: owner },
    { name: 'bert', api: bert.api },
  ]) {
    for (const range of randomRanges()) {
      for (const comparison of comparisons(range)) {
        const path = `time/reports/${comparison.report}`
        const what = `${viewer.name} ${comparison.report} ${JSON.stringify({ ...comparison.query, $filter: comparison.pin })}`
        const readsBefore = aggregateReads
        const aggregated = await ok(viewer.api.get(path, { ...comparison.query, ...(comparison.pin === undefined ? {} : { $filter: comparison.pin }) }), 200, what)
        if (aggregateReads !== readsBefore + 1) notFromAggregates.push(what)
        const forced = comparison.pin === undefined ? ALWAYS_TRUE : `(${comparison.pin}) and (${ALWAYS_TRUE})`
        const readsBeforeScan = aggregateReads
        const scanned = await ok(viewer.api.get(path, { ...comparison.query, $filter: forced }), 200, `${what} (query engine)`)
        if (aggregateReads !== readsBeforeScan) notFromAggregates.push(`${what}: the forced query read the aggregates`)
        compared += 1
        if (/"count":[1-9]|"time":[1-9]/.test(JSON.stringify(scanned))) nonEmpty += 1
        if (!isDeepStrictEqual(aggregated, scanned)) mismatches.push({ what, aggregated, scanned })
      }
    }
  }
  t.equal(mismatches.length, 0, `${label}: ${compared} reports, the aggregates equal the query engine (seed ${SEED})`)
  if (mismatches[0] !== undefined) t.same(mismatches[0].aggregated, mismatches[0].scanned, `first difference: ${mismatches[0].what}`)
  t.same(notFromAggregates, [], `${label}: unfiltered and pinned reports come from the aggregates, forced ones do not`)
  t.ok(nonEmpty > compared / 4, `${label}: the reports are not all empty (${nonEmpty} of ${compared} hold records)`)
}

t.test('aggregates equal the query engine over random data and changes', async (t) => {
  await createRecords(INITIAL_RECORDS)
  await compareAll(t, 'after the initial records')
  for (let round = 1; round <= ROUNDS; round += 1) {
    const done = new Map<string, number>()
    for (let index = 0; index < OPERATIONS_PER_ROUND; index += 1) {
      const name = await randomOperation()
      done.set(name, (done.get(name) ?? 0) + 1)
    }
    const surroundings = await changeSurroundings(round)
    await compareAll(t, `round ${round} (${[...done].map(([name, count]) => `${count} ${name}`).join(', ')}; ${surroundings.join(', ')})`)
  }
  // What the owner cannot see must really be there: Bert sees records the owner's reports leave out.
  const seenByOwner = (await ok(owner.get('time/reports/singletotals'), 200, 'owner totals')).count as number
  const seenByBert = (await ok(bert.api.get('time/reports/singletotals', { $filter: `project/id eq '${bertPersonal}'` }), 200, 'bert totals')).count as number
  const ownerOfBerts = (await ok(owner.get('time/reports/singletotals', { $filter: `project/id eq '${bertPersonal}'` }), 200, 'owner on bert')).count as number
  t.ok(seenByBert > 0, `Bert's personal project holds records (${seenByBert})`)
  t.equal(ownerOfBerts, 0, "the owner's reports leave out Bert's personal project")
  t.ok(seenByOwner > 0)
})
