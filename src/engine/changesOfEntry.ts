/*
 * The changes one log entry made (domain/changes.ts), derived from the entry
 * alone, so that a subscriber resuming from the log gets the very events a
 * live subscriber got.
 *
 * An entry holds each put's whole record after the write, and each removal's
 * id. The kind is read off them:
 *
 *   del                                   removed
 *   put, trashItem set                    deleted (moved to the trash)
 *   put, version 1, createdAt = entry.at  created
 *   put, the entry removes a TrashItem
 *        and updatedAt ≠ entry.at         restored (trash and restore keep
 *                                         the version and updatedAt)
 *   any other put                         updated
 *
 * A change of a record made at the instant of the entry (createdAt or
 * updatedAt = at) is its creation or update; restoring does not touch
 * either. (One batch entry that both creates and restores the same object
 * in one millisecond would read as created twice: a case no client makes.)
 * Operations on types this build does not declare, and on records that are
 * never events (eventResourceOf), give no change; `op` still counts every
 * operation of the entry, so an event's id does not depend on who reads it.
 * A removal carries the audience it was logged with (`seenBy`, from format
 * 3 on; null before, or when this build cannot read it: domain/changes.ts
 * judges such a removal by its type alone). From format 4 on, each change
 * also says who made the write (`by`) and an update the fields it changed
 * with their values before (`was`): the history tells them
 * (domain/history.ts).
 */
import { audienceFromText } from '../domain/audience.js'
import { ACCESS_RECORD_TYPES, eventResourceOf, type Change, type ChangeKind } from '../domain/changes.js'
import { recordFromFields } from '../domain/recordMaking.js'
import { findResourceByType } from '../domain/resources/index.js'
import type { Rec } from '../domain/schema.js'
import type { LogEntry, LoggedEntry, LoggedOp } from './logEntry.js'

function recordOf(op: Exclude<LoggedOp, { op: 'del' }>): Rec | undefined {
  if (op.op === 'put') return op.rec
  const decl = findResourceByType(op.type)
  return decl === undefined ? undefined : recordFromFields(decl, op.names, op.values)
}

function kindOf(rec: Rec, atMs: number, removesTrashItems: boolean): ChangeKind {
  if (rec.trashItem !== null && rec.trashItem !== undefined) return 'deleted'
  if (rec.version === 1 && rec.createdAt === atMs) return 'created'
  if (removesTrashItems && rec.updatedAt !== atMs) return 'restored'
  return 'updated'
}

/** The entry's changes in the order of its operations. */
export function changesOfEntry(seq: number, entry: LogEntry | LoggedEntry): Change[] {
  const ops: readonly LoggedOp[] = entry.ops
  const removesTrashItems = ops.some((op) => op.op === 'del' && op.type === 'TrashItem')
  const changes: Change[] = []
  const by = entry.by
  for (let index = 0; index < ops.length; index += 1) {
    const op = ops[index] as LoggedOp
    const decl = findResourceByType(op.type)
    if (decl === undefined || eventResourceOf(decl) === null) continue
    if (op.op === 'del') {
      const removedFrom = op.seenBy === undefined ? null : audienceFromText(op.seenBy)
      changes.push({ seq, op: index, atMs: entry.at, decl, id: op.id, kind: 'removed', rec: null, removedFrom, by })
      continue
    }
    const rec = recordOf(op)
    if (rec === undefined) continue
    const was = op.was
    changes.push({ seq, op: index, atMs: entry.at, decl, id: rec.id, kind: kindOf(rec, entry.at, removesTrashItems), rec, removedFrom: null, by, was })
  }
  return changes
}

/** Whether the entry changed a record that decides who may read what (domain/changes.ts ACCESS_RECORD_TYPES). */
export function entryChangesAccess(entry: LogEntry | LoggedEntry): boolean {
  const ops: readonly LoggedOp[] = entry.ops
  return ops.some((op) => ACCESS_RECORD_TYPES.has(op.type))
}
