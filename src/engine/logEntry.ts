/*
 * What the write-ahead log holds: one LogEntry per acknowledged write (a
 * single request, or a whole batch transaction group). An entry is a list
 * of primitive operations with every value already decided — new ids,
 * timestamps, hashes, calculated prices and derived fields travel inside it —
 * so applying the same entries to the same state always gives the same state.
 */
import type { Rec } from '../domain/schema.js'

export type Op =
  /** Insert or replace a whole record. */
  | { op: 'put'; type: string; rec: Rec }
  /** Remove a record for good. */
  | { op: 'del'; type: string; id: string }

export const LOG_ENTRY_FORMAT = 1

export interface LogEntry {
  /** Format version of the entry. */
  v: number
  /** When the write was decided, epoch ms. */
  at: number
  ops: Op[]
}
