/*
 * An import: the rows of another tool's CSV export (imports/) become time
 * records, with the clients, projects, tasks and tags they name, in ONE
 * write — all of it or nothing.
 *
 * It runs in two passes, as steps (a pause every STEP_ROWS rows, so the
 * tenant layer can give the other tenants their turn: a write in slices):
 *
 *   1. read every row (interpretRow.ts) and find its user; a refusal here
 *      (a bad date, an unknown user) comes before anything is written;
 *   2. per row, in file order: the client, project, task and tags it names
 *      — an existing one the caller sees, matched by name without regard
 *      to case or surrounding spaces, or a new one (made once, on the first
 *      line that names it) — then the time record.
 *
 * Matching: a client or tag by its name; a project by its name and client
 * (a row without a client takes the project of that name without a
 * client, else the only one of that name, and refuses a name several
 * clients' projects share); a task by its name and project. Objects in the
 * trash and what the caller may not see (another user's personal project)
 * are never matched.
 *
 * Users: by e-mail (without regard to case), or by first and last name
 * when the file has no e-mail (Harvest); a user outside the trash, active
 * or not. A row whose user is unknown is refused with its line, unless
 * unknown_users=self gives it to the caller.
 *
 * Every object is made by createObject, as a POST of it would be: the
 * caller's write rules (a time record of another user needs an admin, or a
 * project manager owning its project; a client or tag a project manager),
 * the locked periods, the constraints. A refusal names the line that needed
 * the object. A dry run (previewImport) decides all the same on the write's
 * transaction, then throws its outcome as ImportPreview: the write is rolled
 * back and nothing is logged.
 */
import type { Caller } from '../caller.js'
import { accountOf } from '../account.js'
import { ApiError } from '../errors.js'
import { canSee } from '../policy.js'
import { resourceByType } from '../resources/index.js'
import { liveUserWithEmail } from '../resources/user.js'
import type { Rec, ResourceDecl } from '../schema.js'
import type { StateView, Tx } from '../tx.js'
import type { ColumnPlan } from '../imports/importLayouts.js'
import { interpretRow, refusedAt, type ImportLine, type InterpretedRow, type ValueOptions } from '../imports/interpretRow.js'
import { createObject } from './createObject.js'

/** Rows an import decides between two pauses. */
const STEP_ROWS = 256

export type UnknownUsers = 'refuse' | 'self'

export interface ImportInput {
  readonly plan: ColumnPlan
  readonly lines: readonly ImportLine[]
  /** The time zone of local times; null: the account's. */
  readonly timeZone: string | null
  readonly values: Omit<ValueOptions, 'timeZone'>
  readonly unknownUsers: UnknownUsers
  /** How many rows' interpretation the outcome shows. */
  readonly previewRows: number
  /** Rows of one import at most, and so time records of one write (MAX_IMPORT_ROWS). */
  readonly maxRows: number
}

/** A client, project, task or tag a row names: an existing one (its id) or one the import makes. */
export interface NamedObject {
  readonly name: string
  readonly id: string
  readonly existing: boolean
}

interface PreviewRow {
  readonly line: number
  readonly user: { readonly id: string; readonly email: string }
  readonly assignedToCaller: boolean
  readonly client: NamedObject | null
  readonly project: NamedObject | null
  readonly task: NamedObject | null
  readonly tags: readonly NamedObject[]
  readonly start: number
  readonly stop: number | null
  readonly duration: number | null
  readonly billable: boolean | null
  readonly description: string | null
}

interface Counts {
  clients: number
  projects: number
  tasks: number
  tags: number
}

export interface ImportOutcome {
  readonly rows: number
  readonly created: Counts & { timeRecords: number }
  readonly matched: Counts
  /** Distinct users the records belong to. */
  readonly users: number
  /** Rows of unknown users given to the caller (unknown_users=self). */
  readonly assignedToCaller: number
  readonly timeZone: string
  readonly preview: readonly PreviewRow[]
}

/** A dry run's outcome, thrown to roll its write back (see the top). */
export class ImportPreview extends Error {
  constructor(readonly outcome: ImportOutcome) {
    super('an import dry run: rolled back')
  }
}

const nameKey = (name: string) => name.trim().toLowerCase()

/** The row's line and what it was making, in front of a refusal of that making. */
function atLine(line: number, what: string, error: unknown): unknown {
  if (!(error instanceof ApiError)) return error
  return new ApiError(error.code, `line ${line}, ${what}: ${error.message}`, error.description, error.constraintViolations, error.headers)
}

/** The live objects of a type the caller sees. */
function visible(state: StateView, caller: Caller, decl: ResourceDecl): Rec[] {
  const found: Rec[] = []
  for (const rec of state.collection(decl.type).values()) if (rec.trashItem === null && canSee(caller, decl, rec, state)) found.push(rec)
  return found
}

/** The users of the rows: by e-mail, or by first and last name; the caller for unknown ones when allowed. */
class UserFinder {
  private byName: Map<string, Rec[]> | null = null

  constructor(
    private readonly state: StateView,
    private readonly caller: Caller,
    private readonly unknownUsers: UnknownUsers,
    private readonly plan: ColumnPlan,
  ) {}

  find(row: InterpretedRow): { user: Rec; assigned: boolean } {
    const found = row.email !== null ? liveUserWithEmail(this.state, row.email) : this.byNames(row)
    if (found !== undefined) return { user: found, assigned: false }
    if (this.unknownUsers === 'self') return { user: this.state.get('User', this.caller.userId) as Rec, assigned: true }
    const byEmail = this.plan.columns.get('email')
    const column = byEmail?.header ?? this.plan.columns.get('firstName')?.header ?? null
    const who = row.email ?? ([row.firstName, row.lastName].filter((part) => part !== null).join(' ') || null)
    throw refusedAt(row.line, column, `${who === null ? 'no user is named' : `no user '${who}' in this account`} (unknown_users=self imports such rows as the caller's)`)
  }

  private byNames(row: InterpretedRow): Rec | undefined {
    if (row.firstName === null && row.lastName === null) return undefined
    this.byName ??= this.nameIndex()
    const matches = this.byName.get(`${nameKey(row.firstName ?? '')}\u0000${nameKey(row.lastName ?? '')}`) ?? []
    if (matches.length > 1) {
      throw refusedAt(
        row.line,
        this.plan.columns.get('firstName')?.header ?? null,
        `${matches.length} users are named '${row.firstName ?? ''} ${row.lastName ?? ''}': add an e-mail column (map.email) to tell them apart`,
      )
    }
    return matches[0]
  }

  private nameIndex(): Map<string, Rec[]> {
    const index = new Map<string, Rec[]>()
    for (const user of this.state.collection('User').values()) {
      if (user.trashItem !== null) continue
      const key = `${nameKey(String(user.firstName ?? ''))}\u0000${nameKey(String(user.lastName ?? ''))}`
      index.set(key, [...(index.get(key) ?? []), user])
    }
    return index
  }
}

/** The clients, projects, tasks and tags of the rows: found by name (see the top) or made, counted either way. */
class NamedObjects {
  private readonly clients = new Map<string, Rec>()
  private readonly projects = new Map<string, Rec[]>()
  private readonly tasks = new Map<string, Rec>()
  private readonly tags = new Map<string, Rec>()
  /** Ids of the objects this import made. */
  private readonly made = new Set<string>()
  readonly created: Counts = { clients: 0, projects: 0, tasks: 0, tags: 0 }
  private readonly used = new Set<string>()
  readonly matched: Counts = { clients: 0, projects: 0, tasks: 0, tags: 0 }
  private readonly decls = {
    Client: resourceByType('Client'),
    Project: resourceByType('Project'),
    Task: resourceByType('Task'),
    Tag: resourceByType('Tag'),
  }

  constructor(
    private readonly tx: Tx,
    private readonly caller: Caller,
  ) {
    const { state } = tx
    for (const client of visible(state, caller, this.decls.Client)) if (!this.clients.has(nameKey(String(client.name ?? '')))) this.clients.set(nameKey(String(client.name ?? '')), client)
    for (const project of visible(state, caller, this.decls.Project)) {
      const key = nameKey(String(project.name ?? ''))
      this.projects.set(key, [...(this.projects.get(key) ?? []), project])
    }
    for (const task of visible(state, caller, this.decls.Task)) {
      const key = this.taskKey(String(task.name ?? ''), (task.project as string | null) ?? null)
      if (!this.tasks.has(key)) this.tasks.set(key, task)
    }
    for (const tag of visible(state, caller, this.decls.Tag)) if (!this.tags.has(nameKey(String(tag.name)))) this.tags.set(nameKey(String(tag.name)), tag)
  }

  client(name: string, line: number): Rec {
    const key = nameKey(name)
    const found = this.clients.get(key)
    if (found !== undefined) return this.note('clients', found)
    const rec = this.make(this.decls.Client, { name: name.trim() }, line, `client '${name}'`, 'clients')
    this.clients.set(key, rec)
    return rec
  }

  project(name: string, client: Rec | null, line: number): Rec {
    const key = nameKey(name)
    const named = this.projects.get(key) ?? []
    let found: Rec | undefined
    if (client !== null) found = named.find((project) => project.client === client.id)
    else {
      found = named.find((project) => project.client === null || project.client === undefined)
      if (found === undefined && named.length > 1) {
        throw refusedAt(line, null, `${named.length} projects are named '${name}', of different clients: the row needs a client to tell which`)
      }
      found ??= named[0]
    }
    if (found !== undefined) return this.note('projects', found)
    const values: Record<string, unknown> = { name: name.trim() }
    if (client !== null) values.client = client.id
    const rec = this.make(this.decls.Project, values, line, `project '${name}'`, 'projects')
    this.projects.set(key, [...named, rec])
    return rec
  }

  task(name: string, project: Rec | null, line: number): Rec {
    const key = this.taskKey(name, project?.id ?? null)
    const found = this.tasks.get(key)
    if (found !== undefined) return this.note('tasks', found)
    const values: Record<string, unknown> = { name: name.trim() }
    if (project !== null) values.project = project.id
    const rec = this.make(this.decls.Task, values, line, `task '${name}'`, 'tasks')
    this.tasks.set(key, rec)
    return rec
  }

  tag(name: string, line: number): Rec {
    const key = nameKey(name)
    const found = this.tags.get(key)
    if (found !== undefined) return this.note('tags', found)
    const rec = this.make(this.decls.Tag, { name: name.trim() }, line, `tag '${name}'`, 'tags')
    this.tags.set(key, rec)
    return rec
  }

  /** What a preview shows of an object a row names. */
  describe(rec: Rec): NamedObject {
    return { name: String(rec.name ?? ''), id: rec.id, existing: !this.made.has(rec.id) }
  }

  private taskKey(name: string, projectId: string | null): string {
    return `${nameKey(name)}\u0000${projectId ?? ''}`
  }

  private note(kind: keyof Counts, rec: Rec): Rec {
    if (!this.made.has(rec.id) && !this.used.has(rec.id)) {
      this.used.add(rec.id)
      this.matched[kind] += 1
    }
    return rec
  }

  private make(decl: ResourceDecl, values: Record<string, unknown>, line: number, what: string, kind: keyof Counts): Rec {
    let rec: Rec
    try {
      rec = createObject(this.tx, this.caller, decl, values)
    } catch (error) {
      throw atLine(line, `making ${what}`, error)
    }
    this.made.add(rec.id)
    this.created[kind] += 1
    return rec
  }
}

/** The import (see the top), as steps; its outcome once every record is made. */
export function* importTimeRecords(tx: Tx, caller: Caller, input: ImportInput): Generator<void, ImportOutcome, void> {
  const { state } = tx
  if (input.lines.length > input.maxRows) throw new ApiError('TL01-9002', `an import takes at most ${input.maxRows} rows (MAX_IMPORT_ROWS); this one has ${input.lines.length}: split the file`)
  const timeZone = input.timeZone ?? String(accountOf(state).timeZone ?? 'UTC')
  const options: ValueOptions = { ...input.values, timeZone }
  const finder = new UserFinder(state, caller, input.unknownUsers, input.plan)

  // 1. Every row read and its user found: refusals before any write.
  const rows: { row: InterpretedRow; user: Rec; assigned: boolean }[] = []
  for (const [index, line] of input.lines.entries()) {
    const row = interpretRow(line, input.plan, options)
    rows.push({ row, ...finder.find(row) })
    if (index % STEP_ROWS === STEP_ROWS - 1) yield
  }

  // 2. The objects the rows name, and the records.
  const named = new NamedObjects(tx, caller)
  const timeRecord = resourceByType('TimeRecord')
  const users = new Set<string>()
  const preview: PreviewRow[] = []
  let assignedToCaller = 0
  for (const [index, { row, user, assigned }] of rows.entries()) {
    const client = row.client === null ? null : named.client(row.client, row.line)
    const project = row.project === null ? null : named.project(row.project, client, row.line)
    const task = row.task === null ? null : named.task(row.task, project, row.line)
    const tags = row.tags.map((name) => named.tag(name, row.line))
    const values: Record<string, unknown> = {
      user: user.id,
      start: row.start,
      stop: row.stop,
      duration: row.duration,
      description: row.description,
      project: project?.id ?? null,
      task: task?.id ?? null,
      client: client?.id ?? (project?.client as string | null | undefined) ?? null,
    }
    if (row.billable !== null) values.billable = row.billable
    if (tags.length > 0) values.tags = tags.map((tag) => tag.id)
    try {
      createObject(tx, caller, timeRecord, values)
    } catch (error) {
      throw atLine(row.line, 'making its time record', error)
    }
    users.add(user.id)
    if (assigned) assignedToCaller += 1
    if (preview.length < input.previewRows) {
      preview.push({
        line: row.line,
        user: { id: user.id, email: String(user.email) },
        assignedToCaller: assigned,
        client: client === null ? null : named.describe(client),
        project: project === null ? null : named.describe(project),
        task: task === null ? null : named.describe(task),
        tags: tags.map((tag) => named.describe(tag)),
        start: row.start,
        stop: row.stop,
        duration: row.duration,
        billable: row.billable,
        description: row.description,
      })
    }
    if (index % STEP_ROWS === STEP_ROWS - 1) yield
  }
  return {
    rows: rows.length,
    created: { ...named.created, timeRecords: rows.length },
    matched: { ...named.matched },
    users: users.size,
    assignedToCaller,
    timeZone,
    preview,
  }
}

/** A dry run: the import decided in full, then its outcome thrown (ImportPreview), which rolls the write back. */
export function* previewImport(tx: Tx, caller: Caller, input: ImportInput): Generator<void, never, void> {
  throw new ImportPreview(yield* importTimeRecords(tx, caller, input))
}
