/*
 * What the write-ahead log holds: one LogEntry per acknowledged write (a
 * single request, or a whole batch transaction group). An entry is a list
 * of primitive operations with every value already decided — new ids,
 * timestamps, hashes, calculated prices and derived fields travel inside it —
 * so applying the same entries to the same state always gives the same state.
 *
 * A write logs a LogEntry; the log gives back a LoggedEntry, whose puts are
 * either whole records (format 1) or a record's field names and values in
 * their order (format 2, which writes use: persist/codec.ts says why).
 */
import type { Rec } from '../domain/schema.js'

export type Op =
  /** Insert or replace a whole record. */
  | { op: 'put'; type: string; rec: Rec }
  /** Remove a record for good. */
  | { op: 'del'; type: string; id: string }

/** The format written; entries of every earlier format still read. */
export const LOG_ENTRY_FORMAT = 2

export interface LogEntry {
  /** Format version of the entry. */
  v: number
  /** When the write was decided, epoch ms. */
  at: number
  ops: Op[]
}

/** A put as format 2 logs it: the record's field names and, in the same order, their values. */
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
