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
 * Who sees a change. Its audience (audience.ts): whom a GET of the object
 * would show it (policy.ts audienceOf, canSee for every caller at once),
 * judged against the state when the event is sent: never an internal record
 * (sessions, password confirmations, uploaded files' metadata) nor one
 * whose declaration says its changes are never events (`changeEvents:
 * 'never'`: the webhooks' own records, which change with every delivery),
 * never someone else's personal project or what belongs to it, nor a trash
 * item of such a thing; a record only its user reads (readRule
 * `userOnly`: a secret key) reaches that user alone. A record
 * that is gone by now (a subscriber resuming from the log reads it as it
 * was) and that belonged to a project the state no longer holds reaches
 * nobody: whether that project was personal is unknown. A
 * declaration's `changeEvents` may give an internal resource an event
 * resource, audience and object of its own: the key/value storage entries
 * appear as `storage`, public ones to everyone, private ones to their
 * owner. A record removed for good is gone when its event is sent, so its
 * removal is logged with the audience it had just before
 * (engine/writeTx.ts, `removalAudienceText`), and its `removed` event goes
 * to that audience, live and on a resume from the log alike. A removal
 * logged by an older build, without it, is judged by its type alone: only
 * callers who see every record of the resource get it
 * (policy.ts audienceOfEveryRecord; nobody, for records that can be
 * personal, private or stand for another).
 *
 * The event. `{seq, op, at, resource, type, id, kind, version, object}`,
 * the object as GET renders it (or its stub), JSON text made once per
 * change and form (and form of dates: `/Date(ms)/`, or ISO 8601 for a
 * subscriber that asks) and shared by every subscriber who gets it. Its
 * audience is judged once per change as well (`EventTexts.audience`), so
 * what each subscriber pays is a comparison (audience.ts admits: everyone,
 * a superuser, its own user id), not a policy evaluation.
 */
import { admits, audienceText, NOBODY, type Audience } from './audience.js'
import type { Caller } from './caller.js'
import type { FieldValues } from './fieldChanges.js'
import { audienceOf, audienceOfEveryRecord, namesMissingProject } from './policy.js'
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
  /** Removed: who could see the record just before, as its removal was logged; null when the log does not say (an older build). */
  readonly removedFrom: Audience | null
  /** Who made the write: a user's id, null for a write no signed-in user made; absent when the log does not say (before format 4). */
  readonly by?: string | null
  /** An update logged from format 4 on: the fields it changed and their values before (fieldChanges.ts). */
  readonly was?: FieldValues
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

/** Who gets the events of changes of `rec` in `context` (see the top): whom a GET of it would show it. */
export function eventAudienceOf(decl: ResourceDecl, rec: Rec, context: DisplayContext): Audience {
  const events = decl.changeEvents
  if (events === 'never') return NOBODY
  if (events !== null) return events.audience(rec)
  // Gone by now (a resume reads it from the log) with the project it belonged to: whether that was personal is unknown.
  if (context.get(decl.type, rec.id) === undefined && namesMissingProject(decl, rec, context)) return NOBODY
  return audienceOf(decl, rec, context)
}

/** The audience a removal of `rec` is logged with (engine/writeTx.ts): its events' audience just before it goes. */
export function removalAudienceText(decl: ResourceDecl, rec: Rec, context: DisplayContext): string {
  return audienceText(eventAudienceOf(decl, rec, context))
}

/** Who gets a change's event now: the record's audience, or for a removal the one it was logged with. */
function changeAudience(change: Change, context: DisplayContext): Audience {
  const { decl, rec } = change
  if (rec !== null) return eventAudienceOf(decl, rec, context)
  if (change.removedFrom !== null) return change.removedFrom
  // An older build's removal: only those who see every record of the type (a user's own records: nobody else).
  if (decl.changeEvents !== null) return NOBODY
  return audienceOfEveryRecord(decl)
}

/** Whether `caller` gets the change's event (see the top): a function of the change and the caller alone, given the state. */
export function changeVisibleTo(caller: Caller, change: Change, context: DisplayContext): boolean {
  return admits(changeAudience(change, context), caller)
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
function changeEventJson(change: Change, form: EventForm, context: DisplayContext, isoDates = false): string {
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

/** An event as JSON text: made once per change and form, and the same object for every subscriber who gets it. */
export interface EventText {
  readonly change: Change
  readonly json: string
}

/**
 * The events' JSON texts of one delivery round, made once per change and form however many subscribers get them
 * (the state they render from is the same for all of them).
 */
export class EventTexts {
  private readonly made = new Map<Change, Partial<Record<EventForm, EventText>>>()
  /** The same with ISO dates, for the subscribers that ask for them (made only when one does). */
  private readonly madeIso = new Map<Change, Partial<Record<EventForm, EventText>>>()
  private readonly audiences = new Map<Change, Audience>()

  constructor(readonly context: DisplayContext) {}

  /** Who gets the change's event (changeAudience), judged once for every subscriber of the round. */
  audience(change: Change): Audience {
    let audience = this.audiences.get(change)
    if (audience === undefined) {
      audience = changeAudience(change, this.context)
      this.audiences.set(change, audience)
    }
    return audience
  }

  text(change: Change, form: EventForm, isoDates = false): EventText {
    const made = isoDates ? this.madeIso : this.made
    let forms = made.get(change)
    if (forms === undefined) {
      forms = {}
      made.set(change, forms)
    }
    forms[form] ??= { change, json: changeEventJson(change, form, this.context, isoDates) }
    return forms[form]
  }
}
