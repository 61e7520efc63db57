/*
 * A change: what one operation of a log entry did to one object, as the
 * change feed and the webhooks tell it (engine/changesOfEntry.ts derives the
 * changes of an entry; tenants/changeFeed.ts hands them out once durable).
 * This module says which changes exist, who may see one, and how one is
 * written as an event.
 *
 * Kinds. A change is `created`, `updated`, `deleted` (moved to the trash),
 * `restored` (out of it) or `removed` (for good). The log entry holds only
 * the record after the write, so the kind is read off that record and the
 * entry (changesOfEntry.ts says how); the same rules give the same kinds
 * live and when a subscriber resumes from the log.
 *
 * Who sees a change. Exactly whom a GET of the object would show it
 * (policy.ts canSee): never an internal record (sessions, password
 * confirmations, uploaded files' metadata) nor one whose declaration says
 * its changes are never events (`changeEvents: 'never'`: the webhooks' own
 * records, which change with every delivery), never someone else's personal
 * project or what belongs to it, never another user's own-record objects
 * (secret keys). A declaration's `changeEvents` may give an internal
 * resource an event resource, visibility and object of its own: the
 * key/value storage entries appear as `storage`, public ones to everyone,
 * private ones to their owner. A removed object is judged by
 * nothing but its type: its record is gone, so a `removed` event of a
 * resource the caller may list reaches them with the id only.
 *
 * The event. `{seq, op, at, resource, type, id, kind, version, object}`,
 * the object as GET renders it (or its stub), JSON text made once per
 * change and form (and form of dates: `/Date(ms)/`, or ISO 8601 for a
 * subscriber that asks) and shared by every subscriber who gets it.
 */
import type { Caller } from './caller.js'
import { canSee } from './policy.js'
import { renderRecord, renderStub, type OutObject } from './render.js'
import { RESOURCES } from './resources/index.js'
import type { DisplayContext, Rec, ResourceDecl } from './schema.js'
import { isoDatesReplacer, OutDate } from './values.js'

export type ChangeKind = 'created' | 'updated' | 'deleted' | 'restored' | 'removed'

export interface Change {
  /** The log entry's sequence number. */
  readonly seq: number
  /** The change's place among the entry's operations (0, 1, …): with `seq`, the event's id. */
  readonly op: number
  /** When the write was decided, epoch ms. */
  readonly atMs: number
  readonly decl: ResourceDecl
  readonly id: string
  readonly kind: ChangeKind
  /** The record after the change; null when removed. */
  readonly rec: Rec | null
}

/**
 * The records whose change may change what a subscriber may read: its token (a logout, a revocation), its user
 * (deactivated, moved to the trash, no longer an admin), the account (its owner). A subscriber checks its access
 * again after an entry that changed one of them.
 */
export const ACCESS_RECORD_TYPES: ReadonlySet<string> = new Set(['AuthToken', 'User', 'Account'])

/** How a subscriber asked for objects. */
export type EventForm = 'full' | 'fullWithStubs' | 'stub'

/**
 * The resource an event names: the declaration's path, or the event resource its `changeEvents` gives; null for
 * records that are never events (internal ones without `changeEvents`, and those that say 'never').
 */
export function eventResourceOf(decl: ResourceDecl): string | null {
  const events = decl.changeEvents
  if (events === 'never') return null
  if (events !== null) return events.resource
  return decl.internal ? null : decl.path
}

let declsByEventResource: Map<string, ResourceDecl> | null = null

/** The declaration a resource of `resources=` names (a path under /v1, or an event resource such as `storage`). */
export function eventDeclOf(resource: string): ResourceDecl | undefined {
  declsByEventResource ??= new Map(
    RESOURCES.flatMap((decl) => {
      const named = eventResourceOf(decl)
      if (named === null) return []
      // A path's aliases (`projects` for `time/projects`) name it as they do under /v1.
      const aliases = decl.changeEvents === null ? decl.aliases : []
      return [named, ...aliases].map((name) => [name, decl] as const)
    }),
  )
  return declsByEventResource.get(resource)
}

/** Whether `caller` may see the change now (see the top). */
export function changeVisibleTo(caller: Caller, change: Change, context: DisplayContext): boolean {
  const { decl, rec } = change
  const events = decl.changeEvents
  if (events === 'never') return false
  if (events !== null) return rec === null || events.visibleTo(caller, rec)
  if (decl.internal) return false
  if (rec === null) return decl.readRule === 'everyone' || caller.superuser
  return canSee(caller, decl, rec, context)
}

/** The object of an event; its dates as `/Date(ms)/` text, or as OutDate (isoDates) for the replacer that writes them as ISO text. */
function objectOf(change: Change, form: EventForm, context: DisplayContext, isoDates: boolean): OutObject | null {
  const { decl, rec } = change
  if (rec === null) return null
  if (decl.changeEvents !== null && decl.changeEvents !== 'never') return decl.changeEvents.object(rec)
  if (form === 'stub') return renderStub(decl, rec, context, !isoDates)
  return renderRecord(decl, rec, context, { noExpand: form === 'fullWithStubs', jsonDates: !isoDates })
}

/** The event's JSON text; with `isoDates` its dates are ISO 8601 text instead of `/Date(ms)/` (the feed's `dates=iso`). */
export function changeEventJson(change: Change, form: EventForm, context: DisplayContext, isoDates = false): string {
  const event = {
    seq: change.seq,
    op: change.op,
    at: isoDates ? new OutDate(change.atMs) : `/Date(${change.atMs})/`,
    resource: eventResourceOf(change.decl),
    type: change.decl.type,
    id: change.id,
    kind: change.kind,
    version: change.rec === null ? null : change.rec.version,
    object: objectOf(change, form, context, isoDates),
  }
  return isoDates ? JSON.stringify(event, isoDatesReplacer) : JSON.stringify(event)
}

/**
 * The events' JSON texts of one delivery round, made once per change and form however many subscribers get them
 * (the state they render from is the same for all of them).
 */
export class EventTexts {
  private readonly made = new Map<Change, Partial<Record<EventForm, string>>>()
  /** The same with ISO dates, for the subscribers that ask for them (made only when one does). */
  private readonly madeIso = new Map<Change, Partial<Record<EventForm, string>>>()

  constructor(readonly context: DisplayContext) {}

  text(change: Change, form: EventForm, isoDates = false): string {
    const made = isoDates ? this.madeIso : this.made
    let forms = made.get(change)
    if (forms === undefined) {
      forms = {}
      made.set(change, forms)
    }
    return (forms[form] ??= changeEventJson(change, form, this.context, isoDates))
  }
}
