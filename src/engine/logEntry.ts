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
 */
import type { Rec } from '../domain/schema.js'

export type Op =
  /** Insert or replace a whole record. */
  | { op: 'put'; type: string; rec: Rec }
  /** Remove a record for good; `seenBy`: who could see it just before (for records whose changes are events). */
  | { op: 'del'; type: string; id: string; seenBy?: string }

/** The format written; entries of every earlier format still read. */
export const LOG_ENTRY_FORMAT = 3

export interface LogEntry {
  /** Format version of the entry. */
  v: number
  /** When the write was decided, epoch ms. */
  at: number
  ops: Op[]
}

/** A put as formats 2 and 3 log it: the record's field names and, in the same order, their values. */
export interface LoggedFieldsPut {
  op: 'putFields'
  type: string
  names: readonly string[]
  values: readonly unknown[]
}

export type LoggedOp = Op | LoggedFieldsPut

/** A log entry as read back. */
export interface LoggedEntry {
  v: number
  at: number
  ops: LoggedOp[]
}
