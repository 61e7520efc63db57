/*
 * The clients of the randomized fault test (test/cluster/nemesis.test.ts):
 * workers that write and read projects of several tenants, through HAProxy
 * and straight at each node, and record every request as an operation of
 * the history the checker judges (historyChecker.ts): when it started and
 * ended (this process's monotonic clock), what it put or saw, and its
 * outcome.
 *
 * Every write names what it puts so that anything seen later names it
 * back: a project with an id of the worker's choosing, its `name` a content
 * no other write uses. The operations:
 *
 *   create      POST a new project: version 1.
 *   update      GET a project (a read), then PUT a new name with the
 *               version the GET saw (409 when another write came between:
 *               several workers update the same recent projects on purpose).
 *   group       POST /v1/batch with one transaction group: two new
 *               projects and the update of an existing one, all or nothing.
 *   read        GET one project (404 TL01-1101: absent).
 *   group read  a batch of GETs of an earlier group's three projects (a
 *               batch runs on one state: one moment).
 *   list        one page of the tenant's projects (one moment); when it is
 *               not full, every project it does not name was absent.
 *
 * Outcomes: an answer that says the write was done is `ok`; a 4xx, or a
 * connection refused (nothing was sent), is `failed`; a 5xx, a timeout or a
 * connection lost midway is `unknown`, as is anything else. Reads are
 * recorded only when they answered what they saw. The refusals (4xx) a
 * worker did not expect — anything but a version conflict and what a
 * failed group answers — are counted by status and code, to be shown.
 */
import { randomUUID } from 'node:crypto'
import type { Operation, Outcome, Put, ReadOp, Seen, WriteOp } from './historyChecker.js'
import type { TestClient, TestResponse } from './http.js'
import type { SeededRandom } from './seededRandom.js'

/** Where a request is sent: HAProxy, or one node's public port. */
export interface Target {
  readonly label: string
  readonly client: TestClient
}

export interface WorkloadTenant {
  readonly name: string
  readonly token: string
}

export interface WorkloadOptions {
  readonly tenants: readonly WorkloadTenant[]
  /** HAProxy first, then the nodes. */
  readonly targets: readonly Target[]
  /** The part of requests sent through HAProxy (the rest go to a node picked at random). */
  readonly throughHaproxy: number
  readonly requestTimeoutMs: number
  /** Longest pause of a worker between two operations. */
  readonly thinkMs: number
  /** Each worker draws its choices from a generator derived from this one (`worker <n>`): a seed replays them. */
  readonly random: SeededRandom
}

/** The largest page the service answers; a list read of fewer projects saw the whole tenant. */
const PAGE_SIZE = 1000
/** Updates and groups pick among the newest projects this often, so that workers collide on them. */
const HOT_SHARE = 0.7
const HOT_PROJECTS = 6

/** A project the workers may find: created (acknowledged or not) by one of them. */
interface Known {
  readonly object: string
  readonly tenant: string
  readonly id: string
}

interface GroupMembers {
  readonly tenant: string
  readonly ids: readonly string[]
}

interface ProjectAnswer {
  id: string
  version: number
  name: string
}

class Refusal extends Error {}

/** What a write's answer said: its outcome, and for an acknowledged one the versions it named. */
interface Judged {
  outcome: Outcome
  answered?: number[]
}

/** An answer in short, for the checker's messages: the status and error code, a batch's item codes. */
function describe(answer: TestResponse): string {
  if (Array.isArray(answer.json)) return `${answer.status} [${(answer.json as { code?: number }[]).map((item) => item.code).join(',')}]`
  return `${answer.status} ${answer.json?.code ?? ''}`.trim()
}

export class Workload {
  readonly history: Operation[] = []
  /** Refusals no worker expected, by "status code" (e.g. "401 TL01-1005"). */
  readonly unexpected = new Map<string, number>()
  private readonly known = new Map<string, Known[]>()
  private readonly groups: GroupMembers[] = []
  private nextId = 0
  private stopping = false
  private workers: Promise<void>[] = []

  constructor(private readonly options: WorkloadOptions) {
    for (const tenant of options.tenants) this.known.set(tenant.name, [])
  }

  /** Starts `count` workers. */
  start(count: number): void {
    for (let index = 0; index < count; index += 1) this.workers.push(this.worker(`w${index}`, this.options.random.derive(`worker ${index}`)))
  }

  /** Stops the workers; resolves once every request they sent was answered or given up. */
  async stop(): Promise<void> {
    this.stopping = true
    await Promise.all(this.workers)
  }

  /** Writes acknowledged so far. */
  get acknowledged(): number {
    return this.history.filter((op) => op.kind === 'write' && op.outcome === 'ok').length
  }

  /** The object name the checker knows a project of a tenant by. */
  static objectOf(tenant: string, id: string): string {
    return `${tenant}/${id}`
  }

  /** One list read of the tenant, recorded; null once it was answered, else what came instead. */
  async list(tenant: WorkloadTenant, target: Target, label = 'list'): Promise<string | null> {
    const startMs = performance.now()
    const answer = await this.send(target, tenant, 'GET', '/v1/time/projects', undefined, { $top: PAGE_SIZE, $orderby: 'id' })
    const endMs = performance.now()
    if (answer === null) return 'no answer'
    if (answer.status !== 200 || !Array.isArray(answer.json)) return `${answer.status} ${answer.text.slice(0, 300)}`
    const projects = answer.json as ProjectAnswer[]
    const saw = projects.map((project) => seenOf(tenant.name, project))
    this.record<ReadOp>({ kind: 'read', label: `${label} ${tenant.name} via ${target.label}`, startMs, endMs, saw, ...(projects.length < PAGE_SIZE ? { scope: `${tenant.name}/` } : {}) })
    return null
  }

  private async worker(name: string, random: SeededRandom): Promise<void> {
    while (!this.stopping) {
      const tenant = random.pick(this.options.tenants)
      const target = random.next() < this.options.throughHaproxy ? (this.options.targets[0] as Target) : random.pick(this.options.targets.slice(1))
      const roll = random.next()
      try {
        if (roll < 0.25 || this.knownOf(tenant).length === 0) await this.create(tenant, target)
        else if (roll < 0.6) await this.update(tenant, target, random)
        else if (roll < 0.75) await this.group(tenant, target, random)
        else if (roll < 0.87) await this.readOne(tenant, target, this.pickKnown(tenant, random))
        else if (roll < 0.95) await this.groupRead(tenant, target, random)
        else await this.list(tenant, target)
      } catch (error) {
        throw new Error(`worker ${name}: ${error instanceof Error ? error.stack : String(error)}`)
      }
      await sleep(random.next() * this.options.thinkMs)
    }
  }

  private knownOf(tenant: WorkloadTenant): Known[] {
    return this.known.get(tenant.name) as Known[]
  }

  /** A project to update: one of the newest most of the time (workers collide there), else any. */
  private pickKnown(tenant: WorkloadTenant, random: SeededRandom): Known | undefined {
    const known = this.knownOf(tenant)
    if (known.length === 0) return undefined
    return random.next() < HOT_SHARE ? random.pick(known.slice(-HOT_PROJECTS)) : random.pick(known)
  }

  private content(kind: string): string {
    return `${kind}-${this.nextId + 1}-${randomUUID().slice(0, 8)}`
  }

  private async create(tenant: WorkloadTenant, target: Target): Promise<void> {
    const id = randomUUID()
    const object = Workload.objectOf(tenant.name, id)
    const content = this.content('c')
    this.knownOf(tenant).push({ object, tenant: tenant.name, id })
    await this.write(
      `create via ${target.label}`,
      [{ object, version: 1, content }],
      () => this.send(target, tenant, 'POST', '/v1/time/projects', { id, name: content }),
      (answer) => (answer.status === 201 ? { outcome: 'ok', answered: [answer.json?.version as number] } : this.refusedOrUnknown(answer, 'create', [])),
    )
  }

  /** GETs the project (a read of its own): its version, or undefined when it is absent or the GET failed. */
  private async readOne(tenant: WorkloadTenant, target: Target, project: Known | undefined): Promise<number | undefined> {
    if (project === undefined) return undefined
    const startMs = performance.now()
    const answer = await this.send(target, tenant, 'GET', `/v1/time/projects/${project.id}`)
    const endMs = performance.now()
    if (answer === null) return undefined
    if (answer.status === 200) {
      const seen = seenOf(tenant.name, answer.json as ProjectAnswer)
      this.record<ReadOp>({ kind: 'read', label: `read via ${target.label}`, startMs, endMs, saw: [seen] })
      return seen.value?.version
    }
    if (answer.status === 404 && answer.json?.code === 'TL01-1101')
      this.record<ReadOp>({ kind: 'read', label: `read via ${target.label}`, startMs, endMs, saw: [{ object: project.object, value: null }] })
    else if (answer.status < 500) this.noteUnexpected(answer, 'read')
    return undefined
  }

  private async update(tenant: WorkloadTenant, target: Target, random: SeededRandom): Promise<void> {
    const project = this.pickKnown(tenant, random)
    if (project === undefined) return
    const version = await this.readOne(tenant, target, project)
    if (version === undefined) return
    const content = this.content('u')
    await this.write(
      `update via ${target.label}`,
      [{ object: project.object, version: version + 1, content }],
      () => this.send(target, tenant, 'PUT', `/v1/time/projects/${project.id}`, { name: content, version }),
      (answer) => (answer.status === 200 ? { outcome: 'ok', answered: [answer.json?.version as number] } : this.refusedOrUnknown(answer, 'update', ['409 TL01-1107'])),
    )
  }

  private async group(tenant: WorkloadTenant, target: Target, random: SeededRandom): Promise<void> {
    const updated = this.pickKnown(tenant, random)
    if (updated === undefined) return
    const version = await this.readOne(tenant, target, updated)
    if (version === undefined) return
    const created = [randomUUID(), randomUUID()]
    const transaction = randomUUID()
    const puts: Put[] = [
      ...created.map((id) => ({ object: Workload.objectOf(tenant.name, id), version: 1, content: this.content('g') })),
      { object: updated.object, version: version + 1, content: this.content('gu') },
    ]
    const items = [
      ...created.map((id, index) => ({ id: `c${index}`, method: 'POST', path: '/v1/time/projects', body: JSON.stringify({ id, name: puts[index]?.content }), transaction })),
      { id: 'u', method: 'PUT', path: `/v1/time/projects/${updated.id}`, body: JSON.stringify({ name: puts[2]?.content, version }), transaction },
    ]
    for (const id of created) this.knownOf(tenant).push({ object: Workload.objectOf(tenant.name, id), tenant: tenant.name, id })
    this.groups.push({ tenant: tenant.name, ids: [...created, updated.id] })
    await this.write(
      `group via ${target.label}`,
      puts,
      () => this.send(target, tenant, 'POST', '/v1/batch', items),
      (answer) => {
        if (answer.status !== 200) return this.refusedOrUnknown(answer, 'group', [])
        const answers = answer.json as { code: number; body: string }[]
        const codes = answers.map((item) => item.code)
        if (codes.join() === '201,201,200') return { outcome: 'ok', answered: answers.map((item) => (JSON.parse(item.body) as { version: number }).version) }
        // A stale version or an update of a project that never came to be: the item says so, the others 424; nothing applied.
        if (codes.every((code) => code >= 400 && code < 500)) {
          for (const item of answers) {
            const code = (JSON.parse(item.body) as { code?: string }).code
            const expected = item.code === 424 || (item.code === 409 && code === 'TL01-1107') || (item.code === 404 && code === 'TL01-1101')
            if (!expected) this.count(`group item ${item.code} ${code ?? ''}`)
          }
          return { outcome: 'failed' }
        }
        return { outcome: 'unknown' }
      },
    )
  }

  private async groupRead(tenant: WorkloadTenant, target: Target, random: SeededRandom): Promise<void> {
    const groups = this.groups.filter((group) => group.tenant === tenant.name)
    if (groups.length === 0) return
    const { ids } = random.next() < HOT_SHARE ? random.pick(groups.slice(-HOT_PROJECTS)) : random.pick(groups)
    const items = ids.map((id, index) => ({ id: `r${index}`, method: 'GET', path: `/v1/time/projects/${id}` }))
    const startMs = performance.now()
    const answer = await this.send(target, tenant, 'POST', '/v1/batch', items)
    const endMs = performance.now()
    if (answer === null || answer.status !== 200) return
    const saw: Seen[] = []
    const answers = answer.json as { code: number; body: string }[]
    for (const [index, item] of answers.entries()) {
      const body = JSON.parse(item.body) as ProjectAnswer & { code?: string }
      if (item.code === 200) saw.push(seenOf(tenant.name, body))
      else if (item.code === 404 && body.code === 'TL01-1101') saw.push({ object: Workload.objectOf(tenant.name, ids[index] as string), value: null })
      else return
    }
    this.record<ReadOp>({ kind: 'read', label: `group read via ${target.label}`, startMs, endMs, saw })
  }

  /** Sends and records a write: no answer is unknown, a connection refused failed, an answer what `judge` says. */
  private async write(label: string, puts: Put[], send: () => Promise<TestResponse | null>, judge: (answer: TestResponse) => Judged): Promise<void> {
    const startMs = performance.now()
    let result: Judged & { answer: string }
    try {
      const answer = await send()
      result = answer === null ? { outcome: 'unknown', answer: 'no answer' } : { ...judge(answer), answer: describe(answer) }
    } catch (error) {
      if (!(error instanceof Refusal)) throw error
      result = { outcome: 'failed', answer: 'connection refused' }
    }
    const endMs = performance.now()
    this.record<WriteOp>({ kind: 'write', label, startMs, endMs, puts, outcome: result.outcome, answer: result.answer, ...(result.answered === undefined ? {} : { answered: result.answered }) })
  }

  private record<T extends Operation>(op: Omit<T, 'id'>): void {
    this.nextId += 1
    this.history.push({ ...op, id: this.nextId } as unknown as T)
  }

  /** A write's answer that is not its success: a 4xx is a refusal (counted unless expected), anything else unknown. */
  private refusedOrUnknown(answer: TestResponse, what: string, expected: readonly string[]): Judged {
    if (answer.status >= 400 && answer.status < 500) {
      const key = `${answer.status} ${answer.json?.code ?? ''}`
      if (!expected.includes(key)) this.noteUnexpected(answer, what)
      return { outcome: 'failed' }
    }
    return { outcome: 'unknown' }
  }

  private noteUnexpected(answer: TestResponse, what: string): void {
    this.count(`${what} ${answer.status} ${answer.json?.code ?? answer.text.slice(0, 60)}`)
  }

  private count(key: string): void {
    this.unexpected.set(key, (this.unexpected.get(key) ?? 0) + 1)
  }

  /**
   * Sends a request; null when no answer came (a timeout, a connection lost). A connection refused never carried the
   * request: it throws Refusal, which a write records as failed and a read ignores.
   */
  private async send(target: Target, tenant: WorkloadTenant, method: string, path: string, body?: unknown, query: Record<string, string | number> = {}): Promise<TestResponse | null> {
    try {
      return await target.client.request(method, path, { tenant: tenant.name, query: { token: tenant.token, ...query }, body, timeoutMs: this.options.requestTimeoutMs })
    } catch (error) {
      if ((error as { code?: string }).code === 'ECONNREFUSED') {
        if (method === 'GET' || (path === '/v1/batch' && Array.isArray(body) && body.every((item: { method: string }) => item.method === 'GET'))) return null
        throw new Refusal(`${target.label}: connection refused`)
      }
      return null
    }
  }
}

function seenOf(tenant: string, project: ProjectAnswer): Seen {
  return { object: Workload.objectOf(tenant, project.id), value: { version: project.version, content: project.name } }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}
