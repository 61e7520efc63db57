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
 * confirmations, uploaded files' metadata) nor the webhooks' own records
 * (which change with every delivery), never someone else's personal
 * project or what belongs to it, never another user's own-record objects
 * (secret keys). Key/value storage entries are internal records with rules
 * of their own (storage.ts): public ones reach everyone, private ones their
 * owner; they appear as resource `storage`. A removed object is judged by
 * nothing but its type: its record is gone, so a `removed` event of a
 * resource the caller may list reaches them with the id only.
 *
 * The event. `{seq, op, at, resource, type, id, kind, version, object}`,
 * the object as GET renders it (or its stub), JSON text made once per
 * change and form and shared by every subscriber who gets it.
 */
import type { Caller } from './caller.js'
import { canSee } from './policy.js'
import { renderRecord, renderStub, type OutObject } from './render.js'
import { StorageEntry } from './resources/storageEntry.js'
import { Webhook } from './resources/webhook.js'
import { WebhookDelivery } from './resources/webhookDelivery.js'
import type { DisplayContext, Rec, ResourceDecl } from './schema.js'

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

/** The resource path of the key/value storage entries in events. */
export const STORAGE_EVENT_RESOURCE = 'storage'

/**
 * The records whose change may change what a subscriber may read: its token (a logout, a revocation), its user
 * (deactivated, moved to the trash, no longer an admin), the account (its owner). A subscriber checks its access
 * again after an entry that changed one of them.
 */
export const ACCESS_RECORD_TYPES: ReadonlySet<string> = new Set(['AuthToken', 'User', 'Account'])

/** How a subscriber asked for objects. */
export type EventForm = 'full' | 'fullWithStubs' | 'stub'

/** The resource path an event names: the declaration's, or `storage`; null for records that are never events. */
export function eventResourceOf(decl: ResourceDecl): string | null {
  if (decl === StorageEntry) return STORAGE_EVENT_RESOURCE
  // The webhooks' own records change with every delivery (its log record, the webhook's cursor): never events.
  return decl.internal || decl === WebhookDelivery || decl === Webhook ? null : decl.path
}

/** The declaration a resource path of `resources=` names (a path under /v1, or `storage`). */
export function eventDeclOf(resource: string, byPath: (path: string) => ResourceDecl | undefined): ResourceDecl | undefined {
  if (resource === STORAGE_EVENT_RESOURCE) return StorageEntry
  const decl = byPath(resource)
  return decl === undefined || eventResourceOf(decl) === null ? undefined : decl
}

/** Whether `caller` may see the change now (see the top). */
export function changeVisibleTo(caller: Caller, change: Change, context: DisplayContext): boolean {
  const { decl, rec } = change
  if (decl === StorageEntry) return rec === null || rec.publicScope === true || rec.owner === caller.userId
  if (eventResourceOf(decl) === null) return false
  if (rec === null) return decl.readRule === 'everyone' || caller.superuser
  return canSee(caller, decl, rec, context)
}

function storageObject(rec: Rec): OutObject {
  return {
    id: rec.id,
    group: rec.group,
    key: rec.itemKey,
    scope: rec.publicScope === true ? 'public' : 'private',
    contentType: rec.contentType,
    content: rec.content,
  }
}

function objectOf(change: Change, form: EventForm, context: DisplayContext): OutObject | null {
  const { decl, rec } = change
  if (rec === null) return null
  if (decl === StorageEntry) return storageObject(rec)
  if (form === 'stub') return renderStub(decl, rec, context, true)
  return renderRecord(decl, rec, context, { noExpand: form === 'fullWithStubs', jsonDates: true })
}

/** The event's JSON text. */
export function changeEventJson(change: Change, form: EventForm, context: DisplayContext): string {
  return JSON.stringify({
    seq: change.seq,
    op: change.op,
    at: `/Date(${change.atMs})/`,
    resource: eventResourceOf(change.decl),
    type: change.decl.type,
    id: change.id,
    kind: change.kind,
    version: change.rec === null ? null : change.rec.version,
    object: objectOf(change, form, context),
  })
}

/** The event id `<seq>.<op>`, as SSE's `id:` and `since=` write it. */
export function changeEventId(change: Change): string {
  return `${change.seq}.${change.op}`
}

/**
 * The events' JSON texts of one delivery round, made once per change and form however many subscribers get them
 * (the state they render from is the same for all of them).
 */
export class EventTexts {
  private readonly made = new Map<Change, Partial<Record<EventForm, string>>>()

  constructor(readonly context: DisplayContext) {}

  text(change: Change, form: EventForm): string {
    let forms = this.made.get(change)
    if (forms === undefined) {
      forms = {}
      this.made.set(change, forms)
    }
    return (forms[form] ??= changeEventJson(change, form, this.context))
  }
}
