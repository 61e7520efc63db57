/*
 * The history of an object, and of the tenant: each change the log still
 * holds (domain/changes.ts, derived from the log entries by
 * engine/changesOfEntry.ts) as an item a client reads:
 *
 *   {seq, op, at, user, userKnown, kind, resource, type, id, version, changes}
 *
 * `user` is the stub of the user who made the write (`{id}` alone for a
 * user the tenant no longer holds), null for a write no signed-in user made
 * (a sign-up, a delivery); `userKnown` is false for an entry written
 * before the log recorded who made it (log format 4): its user is unknown.
 * `changes`, for an update, lists each changed field with its old and new
 * value as a GET renders a field (dates as `/Date(ms)/`, references as
 * ids); null for the other kinds, and for an update whose values before
 * are not logged (before format 4) unless the version before it is known
 * to the reader (`previous`). Fields a GET never shows (write-only ones
 * such as password hashes and keys, internal ones, derived ones) never
 * appear, nor do the fields of a resource whose events carry an object of
 * their own (the key/value storage).
 *
 * Who may read the history of an object: whoever a GET of it would show
 * it to now; for an object the tenant no longer holds, whoever got its
 * newest change's event (changes.ts changeVisibleTo). The tenant's history
 * (`/v1/activity`) is for the owner and the admins, each change still
 * judged by its audience (a private storage entry's changes stay its
 * owner's). `$filter` on it runs over the item as the record of
 * ACTIVITY_ITEM (user, resource, type, kind, at, seq, objectId).
 */
import type { Caller } from './caller.js'
import { changeVisibleTo, eventResourceOf, type Change } from './changes.js'
import type { FieldValues } from './fieldChanges.js'
import { changedFields } from './fieldChanges.js'
import { canSee } from './policy.js'
import { renderStub, type OutObject } from './render.js'
import { resourceByType } from './resources/index.js'
import type { DisplayContext, FieldDecl, Rec, ResourceDecl } from './schema.js'
import { declareResource, field } from './declare.js'

/** One changed field as the history shows it. */
export interface FieldChange {
  readonly field: string
  readonly old: unknown
  readonly new: unknown
}

/** Whether a GET shows the field as it is stored (not write-only, internal, derived or computed). */
function shownAsStored(fieldDecl: FieldDecl | undefined): fieldDecl is FieldDecl {
  return fieldDecl !== undefined && fieldDecl.access !== 'WRITE_ONLY' && fieldDecl.access !== 'INTERNAL' && !fieldDecl.hashed && !fieldDecl.computed
}

/** A stored value as the history shows it: a date as `/Date(ms)/`, bytes never. */
function shownValue(fieldDecl: FieldDecl, value: unknown): unknown {
  if (value === undefined || value === null || value instanceof Uint8Array) return null
  if (fieldDecl.type === 'Date' && typeof value === 'number') return `/Date(${value})/`
  return value
}

/** The changed fields a caller may read, old and new, in the declaration's order. */
export function fieldChangesOf(decl: ResourceDecl, rec: Rec, was: FieldValues): FieldChange[] {
  if (decl.changeEvents !== null) return []
  const before = new Map<string, unknown>()
  was.names.forEach((name, at) => {
    before.set(name, was.values[at])
  })
  const changes: FieldChange[] = []
  for (const fieldDecl of decl.fields) {
    if (!before.has(fieldDecl.name) || !shownAsStored(fieldDecl)) continue
    changes.push({ field: fieldDecl.name, old: shownValue(fieldDecl, before.get(fieldDecl.name)), new: shownValue(fieldDecl, rec[fieldDecl.name]) })
  }
  return changes
}

/** The values before an update: logged with it (format 4), else read off the version before it when the reader has it. */
function valuesBefore(change: Change, previous: Rec | null): FieldValues | null {
  if (change.was !== undefined) return change.was
  if (previous === null || change.rec === null) return null
  return changedFields(previous, change.rec) ?? { names: [], values: [] }
}

/** The stub of the user who made the change, `{id}` for one the tenant no longer holds; null for none. */
function userOf(change: Change, context: DisplayContext): OutObject | null {
  const by = change.by
  if (typeof by !== 'string') return null
  const user = context.get('User', by)
  return user === undefined ? { id: by } : renderStub(resourceByType('User'), user, context, true)
}

/**
 * The history item of a change (see the top). `previous`: the object as it was before the change, when the reader
 * knows it (the next older change of the object it read), for an update logged without its values before.
 */
export function historyItemOf(change: Change, context: DisplayContext, previous: Rec | null = null): OutObject {
  let changes: FieldChange[] | null = null
  if (change.kind === 'updated' && change.rec !== null) {
    const was = valuesBefore(change, previous)
    if (was !== null) changes = fieldChangesOf(change.decl, change.rec, was)
  }
  return {
    seq: change.seq,
    op: change.op,
    at: `/Date(${change.atMs})/`,
    user: userOf(change, context),
    userKnown: change.by !== undefined,
    kind: change.kind,
    resource: eventResourceOf(change.decl),
    type: change.decl.type,
    id: change.id,
    version: change.rec === null ? null : change.rec.version,
    changes,
  }
}

/**
 * Whether `caller` may read the history of the object (see the top): as a GET shows it, when the tenant holds it
 * (`current`); else as its newest change's event went (`newest`, null when the log holds none: nobody).
 */
export function historyVisibleTo(caller: Caller, decl: ResourceDecl, current: Rec | undefined, newest: Change | null, context: DisplayContext): boolean {
  if (current !== undefined) return canSee(caller, decl, current, context)
  return newest !== null && changeVisibleTo(caller, newest, context)
}

/** What `$filter` on the tenant's history reads of an item (see the top). */
export const ACTIVITY_ITEM = declareResource({
  type: 'ActivityItem',
  path: null,
  internal: true,
  common: false,
  description: 'a change in the tenant’s history',
  displayName: (rec) => `${String(rec.kind)} ${String(rec.type)} ${String(rec.objectId)}`,
  fields: [
    field.long('seq', 'the log entry’s sequence number'),
    field.date('at', 'when the write was decided'),
    field.ref('user', 'User', 'who made the write (null: no signed-in user, or unknown)', { indexed: false }),
    field.string('resource', 'the resource, as its path under /v1 names it'),
    field.string('type', 'the resource type'),
    field.string('kind', 'created, updated, deleted, restored or removed'),
    field.string('objectId', 'the id of the object changed'),
  ],
})

/** The record `$filter` on the tenant's history tests for a change. */
export function activityRecordOf(change: Change): Rec {
  return {
    seq: change.seq,
    at: change.atMs,
    user: typeof change.by === 'string' ? change.by : null,
    resource: eventResourceOf(change.decl),
    type: change.decl.type,
    kind: change.kind,
    objectId: change.id,
  } as unknown as Rec
}
