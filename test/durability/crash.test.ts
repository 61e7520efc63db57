/*
 * Crash consistency under a mixed load. A server in a child process takes,
 * from several concurrent writers: project creates, updates (PUT with the
 * version), deletes that cascade the project's tasks and time records to
 * the trash, task and time record creates, and batches with a transaction
 * group (a new project with its tasks and a time record; some groups hold
 * an invalid item and must leave nothing). SNAPSHOT_EVERY_COMMANDS is small,
 * so automatic snapshots run under the load. The server is killed with
 * SIGKILL at a random moment, again and again. Every create names its id,
 * so a write in flight at the kill is known too and may land or not.
 *
 * After each restart:
 *   - every acknowledged write is there with its acknowledged version (an
 *     acknowledged delete: the project and its acknowledged children are in
 *     the trash); a write that was in flight is either whole or absent;
 *   - no transaction group is half-applied: all of its objects or none;
 *   - the project counters (append tasks-count, timerecords-count) and the
 *     report totals (readtotals, per project and overall) equal a recount
 *     from the listed objects;
 *   - the log replays cleanly: killed again at once and restarted, the
 *     server gives identical answers (every REPLAY_EVERY rounds and after
 *     the last: the restart after the kill under load replays already).
 * CRASH_ROUNDS sets the number of kills under load (`npm test`: 20, as
 * issue 2 asks; `npm run test:crash`: 100), CRASH_REPLAY_EVERY the rounds
 * between replay checks (5). A restart costs about a second, so the replay
 * check, a restart of its own, is not made after every round by default.
 */
import { randomUUID } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import t, { type Test } from 'tap'
import type { TestResponse } from '../helpers/http.js'
import { killHard, spawnServer, tempDataDir, type ChildServer } from '../helpers/server.js'

const ROUNDS = Number(process.env.CRASH_ROUNDS ?? 20)
/** Rounds between two replay checks (a second kill at rest and a restart that must answer the same); 1: after every round. */
const REPLAY_EVERY = Math.max(1, Number(process.env.CRASH_REPLAY_EVERY ?? 5))
const WRITERS = 4
const TENANT = 'crash'
const ENV = { SNAPSHOT_EVERY_COMMANDS: '40', RATE_LIMIT_REQUESTS: '0' }
const dataDir = tempDataDir('crash')

type Presence = 'yes' | 'no' | 'maybe'

interface ProjectModel {
  id: string
  created: Presence
  version: number
  /** Set while an update was in flight at the kill: the version it would give. */
  nextVersion: number | null
  deleted: Presence
  group: string | null
}

interface ChildModel {
  id: string
  kind: 'task' | 'record'
  project: string
  created: Presence
  duration: number
  group: string | null
}

interface GroupModel {
  members: string[]
  /** 'yes': acknowledged whole; 'no': it held an invalid item; 'maybe': in flight at the kill. */
  applied: Presence
}

const projects = new Map<string, ProjectModel>()
const children = new Map<string, ChildModel>()
const groups = new Map<string, GroupModel>()
let acknowledgedWrites = 0
/** Acknowledged operations by kind, to show what the load did. */
const tally: Record<string, number> = { project: 0, task: 0, record: 0, update: 0, delete: 0, group: 0, failedGroup: 0 }
let checkedWrites = 0
let lostWrites = 0
/** Answers the load did not expect (anything but success, or the connection lost at the kill). */
const unexpected: string[] = []

class UnexpectedAnswer extends Error {}

const refId = (value: unknown): string | null => (typeof value === 'string' ? value : value !== null && typeof value === 'object' ? ((value as { id?: string }).id ?? null) : null)

class Writer {
  /** Ids of this writer's projects that are (acknowledged) live: only this writer touches them. */
  readonly own: string[] = []

  constructor(
    private readonly server: ChildServer,
    private readonly token: string,
    private readonly me: string,
  ) {}

  private request(method: string, path: string, body?: unknown): Promise<TestResponse> {
    return this.server.client.request(method, `/v1/${path}`, { tenant: TENANT, query: { token: this.token }, body, timeoutMs: 5000 })
  }

  /** Runs one operation; false once the server is gone (the operation stays uncertain in the model). */
  async step(): Promise<boolean> {
    try {
      return await this.operation()
    } catch (error) {
      // A refused connection, a reset or a timeout is the kill; any other failure is an answer the load did not expect.
      if (!(error instanceof UnexpectedAnswer)) return false
      unexpected.push(error.message)
      return false
    }
  }

  private async operation(): Promise<boolean> {
    const roll = Math.random()
    const target = this.own.length > 0 ? (this.own[Math.floor(Math.random() * this.own.length)] as string) : null
    if (target === null || roll < 0.22) return this.createProject()
    if (roll < 0.42) return this.createChild('task', target)
    if (roll < 0.62) return this.createChild('record', target)
    if (roll < 0.76) return this.update(target)
    if (roll < 0.84) return this.remove(target)
    return this.group()
  }

  private async createProject(): Promise<boolean> {
    const id = randomUUID()
    const model: ProjectModel = { id, created: 'maybe', version: 1, nextVersion: null, deleted: 'no', group: null }
    projects.set(id, model)
    const response = await this.request('POST', 'time/projects', { id, name: `p-${id.slice(0, 8)}`, timeBudget: 1 })
    if (response.status !== 201) throw new UnexpectedAnswer(`create project: ${response.status} ${response.text}`)
    model.created = 'yes'
    acknowledgedWrites += 1
    tally.project = (tally.project ?? 0) + 1
    this.own.push(id)
    return true
  }

  private async createChild(kind: 'task' | 'record', project: string): Promise<boolean> {
    const id = randomUUID()
    const duration = 1000 * (1 + Math.floor(Math.random() * 500))
    const model: ChildModel = { id, kind, project, created: 'maybe', duration, group: null }
    children.set(id, model)
    const response =
      kind === 'task'
        ? await this.request('POST', 'time/tasks', { id, name: `t-${id.slice(0, 8)}`, project: { id: project } })
        : await this.request('POST', 'time/timerecords', { id, user: { id: this.me }, project: { id: project }, duration, start: '2024-06-10T09:00:00Z' })
    if (response.status !== 201) throw new UnexpectedAnswer(`create ${kind}: ${response.status} ${response.text}`)
    model.created = 'yes'
    acknowledgedWrites += 1
    tally[kind] = (tally[kind] ?? 0) + 1
    return true
  }

  private async update(id: string): Promise<boolean> {
    const model = projects.get(id) as ProjectModel
    model.nextVersion = model.version + 1
    const response = await this.request('PUT', `time/projects/${id}`, { name: `u-${model.nextVersion}`, timeBudget: model.nextVersion, version: model.version })
    if (response.status !== 200) throw new UnexpectedAnswer(`update: ${response.status} ${response.text}`)
    if (response.json.version !== model.nextVersion) throw new UnexpectedAnswer(`update answered version ${response.json.version}, expected ${model.nextVersion}`)
    model.version = model.nextVersion
    model.nextVersion = null
    acknowledgedWrites += 1
    tally.update = (tally.update ?? 0) + 1
    return true
  }

  private async remove(id: string): Promise<boolean> {
    const model = projects.get(id) as ProjectModel
    model.deleted = 'maybe'
    this.own.splice(this.own.indexOf(id), 1)
    const response = await this.request('DELETE', `time/projects/${id}`)
    if (response.status !== 200) throw new UnexpectedAnswer(`delete: ${response.status} ${response.text}`)
    model.deleted = 'yes'
    acknowledgedWrites += 1
    tally.delete = (tally.delete ?? 0) + 1
    return true
  }

  /** A batch whose transaction group makes a project with two tasks and a time record; one in five fails on purpose. */
  private async group(): Promise<boolean> {
    const name = randomUUID()
    const projectId = randomUUID()
    const taskIds = [randomUUID(), randomUUID()]
    const recordId = randomUUID()
    const failing = Math.random() < 0.2
    const duration = failing ? -5 : 60_000
    const items = [
      { id: 'p', method: 'POST', path: '/v1/time/projects', body: JSON.stringify({ id: projectId, name: `g-${name.slice(0, 8)}` }), transaction: name },
      ...taskIds.map((taskId, index) => ({ id: `t${index}`, method: 'POST', path: '/v1/time/tasks', body: JSON.stringify({ id: taskId, name: 'gt', project: { id: projectId } }), transaction: name })),
      {
        id: 'r',
        method: 'POST',
        path: '/v1/time/timerecords',
        body: JSON.stringify({ id: recordId, user: { id: this.me }, project: { id: projectId }, duration, start: '2024-06-11T09:00:00Z' }),
        transaction: name,
      },
    ]
    const group: GroupModel = { members: [projectId, ...taskIds, recordId], applied: failing ? 'no' : 'maybe' }
    groups.set(name, group)
    const created: Presence = failing ? 'no' : 'maybe'
    projects.set(projectId, { id: projectId, created, version: 1, nextVersion: null, deleted: 'no', group: name })
    for (const taskId of taskIds) children.set(taskId, { id: taskId, kind: 'task', project: projectId, created, duration: 0, group: name })
    children.set(recordId, { id: recordId, kind: 'record', project: projectId, created, duration, group: name })
    const response = await this.request('POST', 'batch', items)
    if (response.status !== 200) throw new UnexpectedAnswer(`batch: ${response.status} ${response.text}`)
    const codes = (response.json as { code: number }[]).map((answer) => answer.code)
    const expected = failing ? [424, 424, 424, 412] : [201, 201, 201, 201]
    if (codes.join() !== expected.join()) throw new UnexpectedAnswer(`batch answered ${codes.join()} instead of ${expected.join()}`)
    const kind = failing ? 'failedGroup' : 'group'
    tally[kind] = (tally[kind] ?? 0) + 1
    if (!failing) {
      group.applied = 'yes'
      for (const member of group.members) {
        const project = projects.get(member)
        if (project !== undefined) project.created = 'yes'
        const child = children.get(member)
        if (child !== undefined) child.created = 'yes'
      }
      acknowledgedWrites += 1
      this.own.push(projectId)
    }
    return true
  }
}

// ---------------------------------------------------------------------------
// Reading everything back

interface Observed {
  live: Map<string, Record<string, unknown>>
  trashed: Map<string, Record<string, unknown>>
}

async function listAll(server: ChildServer, token: string, path: string, query: Record<string, string | number | boolean> = {}): Promise<Record<string, unknown>[]> {
  const all: Record<string, unknown>[] = []
  for (let skip = 0; ; skip += 1000) {
    const page = await server.client.request('GET', `/v1/${path}`, { tenant: TENANT, query: { token, $top: 1000, $skip: skip, $orderby: 'id', no_expand: true, ...query } })
    if (page.status !== 200) throw new Error(`GET ${path}: ${page.status} ${page.text}`)
    all.push(...(page.json as Record<string, unknown>[]))
    if ((page.json as unknown[]).length < 1000) return all
  }
}

async function observe(server: ChildServer, token: string, path: string, query: Record<string, string | number | boolean> = {}): Promise<Observed> {
  const byId = (list: Record<string, unknown>[]) => new Map(list.map((item) => [item.id as string, item]))
  return { live: byId(await listAll(server, token, path, query)), trashed: byId(await listAll(server, token, `${path}/@deleted`)) }
}

/** Everything a client can see that the checks compare: lists, counters and report totals. */
async function answers(server: ChildServer, token: string): Promise<{ projects: Observed; tasks: Observed; records: Observed; totals: Record<string, { count: number; time: number }> }> {
  const totals = await server.client.request('GET', '/v1/time/reports/readtotals', { tenant: TENANT, query: { token, range: 365, range_from: '2024-06-15', summary: 'project/id' } })
  if (totals.status !== 200) throw new Error(`readtotals: ${totals.status} ${totals.text}`)
  return {
    projects: await observe(server, token, 'time/projects', { append: 'tasks-count,timerecords-count' }),
    tasks: await observe(server, token, 'time/tasks'),
    records: await observe(server, token, 'time/timerecords'),
    totals: totals.json as Record<string, { count: number; time: number }>,
  }
}

type Answers = Awaited<ReturnType<typeof answers>>

function where(observed: Observed, id: string): 'live' | 'trashed' | 'absent' {
  return observed.live.has(id) ? 'live' : observed.trashed.has(id) ? 'trashed' : 'absent'
}

/** Checks the model against what the server shows, then settles every uncertain entry to what it shows. */
function verify(t: Test, round: number, seen: Answers): void {
  const problems: string[] = []
  let checked = 0
  for (const model of projects.values()) {
    const place = where(seen.projects, model.id)
    if (model.created === 'no' && place !== 'absent') problems.push(`project ${model.id} of a failed group exists`)
    if (model.created === 'yes') {
      checked += 1
      if (place === 'absent') problems.push(`acknowledged project ${model.id} is missing`)
      if (model.deleted === 'yes' && place !== 'trashed') problems.push(`acknowledged delete of ${model.id}: it is ${place}`)
      if (model.deleted === 'no' && place !== 'live') problems.push(`acknowledged project ${model.id} is ${place}`)
      const version = (seen.projects.live.get(model.id) ?? seen.projects.trashed.get(model.id))?.version
      if (version !== model.version && !(model.nextVersion !== null && version === model.nextVersion)) {
        problems.push(`project ${model.id} has version ${String(version)}, acknowledged ${model.version}`)
      }
    }
  }
  for (const model of children.values()) {
    const observed = model.kind === 'task' ? seen.tasks : seen.records
    const place = where(observed, model.id)
    if (model.created === 'no' && place !== 'absent') problems.push(`${model.kind} ${model.id} of a failed group exists`)
    if (model.created === 'yes') {
      checked += 1
      const parent = projects.get(model.project) as ProjectModel
      const parentPlace = where(seen.projects, model.project)
      if (place === 'absent') problems.push(`acknowledged ${model.kind} ${model.id} is missing`)
      else if (parentPlace === 'trashed' && place !== 'trashed') problems.push(`${model.kind} ${model.id} of trashed project ${parent.id} is ${place}`)
      else if (parentPlace === 'live' && place !== 'live') problems.push(`${model.kind} ${model.id} of live project ${parent.id} is ${place}`)
    }
  }
  for (const [name, group] of groups) {
    const present = group.members.filter((member) => {
      const child = children.get(member)
      return where(child === undefined ? seen.projects : child.kind === 'task' ? seen.tasks : seen.records, member) !== 'absent'
    }).length
    if (present !== 0 && present !== group.members.length) problems.push(`transaction group ${name} is half-applied: ${present} of ${group.members.length}`)
    if (group.applied === 'yes' && present !== group.members.length) problems.push(`acknowledged group ${name} is missing`)
    if (group.applied === 'no' && present !== 0) problems.push(`failed group ${name} left objects`)
  }
  for (const [id, project] of seen.projects.live) {
    if (!projects.has(id)) problems.push(`project ${id} was never written`)
    const tasks = [...seen.tasks.live.values()].filter((task) => refId(task.project) === id && task.done !== true).length
    const records = [...seen.records.live.values()].filter((record) => refId(record.project) === id)
    if (project.tasksCount !== tasks) problems.push(`project ${id}: tasksCount ${String(project.tasksCount)}, counted ${tasks}`)
    if (project.timeRecordsCount !== records.length) problems.push(`project ${id}: timeRecordsCount ${String(project.timeRecordsCount)}, counted ${records.length}`)
    const totals = seen.totals[id]
    const time = records.reduce((sum, record) => sum + Number(record.duration), 0)
    if (records.length > 0 && (totals?.count !== records.length || totals.time !== time)) {
      problems.push(`project ${id}: readtotals ${JSON.stringify(totals)}, counted ${records.length} records of ${time} ms`)
    }
  }
  const reported = Object.entries(seen.totals).filter(([key]) => !seen.projects.live.has(key) && seen.totals[key]?.count !== 0)
  if (reported.length > 0) problems.push(`readtotals names projects that are not live: ${reported.map(([key]) => key).join(', ')}`)
  lostWrites += problems.filter((problem) => problem.includes('acknowledged')).length
  checkedWrites += checked
  t.same(problems.slice(0, 20), [], `round ${round}: ${checked} acknowledged objects checked, ${seen.projects.live.size} live projects, no problem`)
  settle(seen)
}

/** Uncertain entries become what the server shows, so the next round checks them as acknowledged. */
function settle(seen: Answers): void {
  for (const model of projects.values()) {
    const place = where(seen.projects, model.id)
    if (model.created === 'maybe') model.created = place === 'absent' ? 'no' : 'yes'
    if (model.deleted === 'maybe') model.deleted = place === 'trashed' ? 'yes' : 'no'
    if (model.nextVersion !== null) {
      model.version = Number((seen.projects.live.get(model.id) ?? seen.projects.trashed.get(model.id))?.version ?? model.version)
      model.nextVersion = null
    }
  }
  for (const model of children.values()) {
    if (model.created === 'maybe') model.created = where(model.kind === 'task' ? seen.tasks : seen.records, model.id) === 'absent' ? 'no' : 'yes'
  }
  for (const group of groups.values()) if (group.applied === 'maybe') group.applied = projects.get(group.members[0] as string)?.created === 'yes' ? 'yes' : 'no'
}

// ---------------------------------------------------------------------------
// The run

t.test(`SIGKILL ${ROUNDS} times under a mixed load: acknowledged writes, groups, counters and replay hold`, async (t) => {
  let server = await spawnServer(dataDir, ENV)
  const { token } = await server.client.createTenant(TENANT)
  const me = (await server.client.request('GET', '/v1/users/@self', { tenant: TENANT, query: { token } })).json.id as string
  const writers: Writer[] = []
  let replayChecks = 0
  /** Where the time goes, in ms: the load before each kill, restarts, reading and checking. */
  const spent = { load: 0, restart: 0, check: 0 }
  const timed = async <T>(phase: keyof typeof spent, work: () => Promise<T>): Promise<T> => {
    const started = performance.now()
    try {
      return await work()
    } finally {
      spent[phase] += performance.now() - started
    }
  }
  for (let round = 0; round < ROUNDS; round += 1) {
    const current = server
    const own = writers.map((writer) => writer.own)
    writers.length = 0
    for (let index = 0; index < WRITERS; index += 1) {
      const writer = new Writer(current, token, me)
      writer.own.push(...(own[index] ?? []).filter((id) => projects.get(id)?.created === 'yes' && projects.get(id)?.deleted === 'no'))
      writers.push(writer)
    }
    const load = Promise.all(
      writers.map(async (writer) => {
        while (await writer.step()) {
          // The next operation; the loop ends when the server is gone.
        }
      }),
    )
    await timed('load', async () => {
      await new Promise((resolve) => setTimeout(resolve, 100 + Math.random() * 400))
      await killHard(current)
      await load
    })
    server = await timed('restart', () => spawnServer(dataDir, ENV))
    const seen = await timed('check', () => answers(server, token))
    verify(t, round, seen)
    if (round % REPLAY_EVERY === REPLAY_EVERY - 1 || round === ROUNDS - 1) {
      await killHard(server)
      server = await timed('restart', () => spawnServer(dataDir, ENV))
      t.same(await timed('check', () => answers(server, token)), seen, `round ${round}: killed again and restarted, the log replays to identical answers`)
      replayChecks += 1
    }
  }
  await killHard(server)
  t.equal(lostWrites, 0, 'no acknowledged write was lost')
  t.same(unexpected.slice(0, 10), [], 'every write was answered as expected until the kill')
  t.ok(acknowledgedWrites > ROUNDS * 5, `writes were acknowledged across rounds (${acknowledgedWrites})`)
  const snapshots = fs.readdirSync(path.join(dataDir, 'snapshots', TENANT)).length
  t.ok(snapshots > 0, `automatic snapshots were taken under the load (${snapshots} files kept)`)
  t.ok(tally.delete !== 0 && tally.group !== 0 && tally.failedGroup !== 0 && tally.update !== 0, `the load mixed every kind: ${JSON.stringify(tally)}`)
  t.ok(replayChecks >= Math.floor(ROUNDS / REPLAY_EVERY), `the replay was checked ${replayChecks} times`)
  console.log(
    `CRASH_FIGURES rounds=${ROUNDS} replayChecks=${replayChecks} acknowledged=${acknowledgedWrites} objectChecks=${checkedWrites} lost=${lostWrites} kinds=${JSON.stringify(tally)} snapshotFiles=${snapshots} ms=${JSON.stringify(Object.fromEntries(Object.entries(spent).map(([phase, ms]) => [phase, Math.round(ms)])))}`,
  )
})
