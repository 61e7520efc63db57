/*
 * What the write-ahead log holds: one LogEntry per acknowledged write (a
 * single request, or a whole batch transaction group). An entry is a list
 * of primitive operations with every value already decided — new ids,
 * timestamps, hashes, calculated prices and derived fields travel inside it —
 * so applying the same entries to the same state always gives the same state.
 *
 * A write logs a LogEntry; the log gives back a LoggedEntry, whose puts are
 * either whole records (format 1) or a record's field names and values in
 * their order (formats 2 and 3, which writes use: persist/codec.ts says
 * why). From format 3 on, the removal of a record that the change feed
 * tells carries who could see it just before (`seenBy`, domain/audience.ts
 * as text): its `removed` event goes to them alone (domain/changes.ts).
 * From format 4 on, an entry says who made the write (`by`: the signed-in
 * user's id, null for a write no user made: a sign-up, a sign-in, a
 * delivery), and a put that replaced a record whose changes are events
 * carries the fields it changed with their values before (`was`,
 * domain/fieldChanges.ts): the history of an object reads both
 * (domain/history.ts). An entry of an earlier format has no `by` (who made
 * it is unknown) and no `was`.
 */
import type { FieldValues } from '../domain/fieldChanges.js'
import type { Rec } from '../domain/schema.js'

export type Op =
  /** Insert or replace a whole record. */
  | { op: 'put'; type: string; rec: Rec; was?: FieldValues }
  /** Remove a record for good; `seenBy`: who could see it just before (for records whose changes are events). */
  | { op: 'del'; type: string; id: string; seenBy?: string }

/** The format written; entries of every earlier format still read. */
export const LOG_ENTRY_FORMAT = 4

export interface LogEntry {
  /** Format version of the entry. */
  v: number
  /** When the write was decided, epoch ms. */
  at: number
  ops: Op[]
  /** Format 4 on: the id of the user who made the write; null when no signed-in user made it. */
  by?: string | null
}

/** A put as formats 2 and 3 log it: the record's field names and, in the same order, their values. */
interface LoggedFieldsPut {
  op: 'putFields'
  type: string
  names: readonly string[]
  values: readonly unknown[]
  /** Format 4 on, for a put that replaced a record whose changes are events: the fields it changed, their values before. */
  was?: FieldValues
}

export type LoggedOp = Op | LoggedFieldsPut

/** A log entry as read back. */
export interface LoggedEntry {
  v: number
  at: number
  ops: LoggedOp[]
  /** Format 4 on (see LogEntry); absent in earlier formats: who made the write is unknown. */
  by?: string | null
}
