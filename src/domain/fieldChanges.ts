/*
 * What an update changed: the fields of a record whose values differ
 * between the record before and after a write, with their values before.
 * The write logs them beside the new record (engine/writeTx.ts, log format
 * 4), so the history of an object (domain/history.ts) shows each changed
 * field's old and new value without looking for the version before it,
 * which the log may no longer hold. `version` and `updatedAt` change with
 * every update and are told by the change itself, so they are left out.
 */
import type { Rec } from './schema.js'

/** Field names and, in the same order, values (a record's changed fields before a write). */
export interface FieldValues {
  readonly names: readonly string[]
  readonly values: readonly unknown[]
}

/** Fields every update changes: the change itself tells them. */
const BOOKKEEPING_FIELDS: ReadonlySet<string> = new Set(['version', 'updatedAt'])

/** Whether two stored values are the same: scalars by value, lists element by element, bytes byte by byte, maps key by key. */
export function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (a === null || b === null || a === undefined || b === undefined) return (a ?? null) === (b ?? null)
  if (typeof a !== 'object' || typeof b !== 'object') return Number.isNaN(a) && Number.isNaN(b)
  if (a instanceof Uint8Array || b instanceof Uint8Array) return a instanceof Uint8Array && b instanceof Uint8Array && Buffer.compare(a, b) === 0
  if (Array.isArray(a) || Array.isArray(b)) return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((item, at) => sameValue(item, b[at]))
  const aKeys = Object.keys(a)
  const bKeys = Object.keys(b)
  if (aKeys.length !== bKeys.length) return false
  return aKeys.every((key) => Object.hasOwn(b, key) && sameValue((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]))
}

/** The fields `after` changed against `before`, with their values before; null when none but the bookkeeping changed. */
export function changedFields(before: Rec, after: Rec): FieldValues | null {
  let names: string[] | null = null
  let values: unknown[] | null = null
  for (const name of Object.keys(after)) {
    if (BOOKKEEPING_FIELDS.has(name) || sameValue(before[name], after[name])) continue
    if (names === null || values === null) {
      names = []
      values = []
    }
    names.push(name)
    values.push(before[name] ?? null)
  }
  return names === null || values === null ? null : { names, values }
}
