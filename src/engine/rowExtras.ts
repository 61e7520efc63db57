/*
 * A row's extras: what a record holds beyond its declaration's fields (a
 * field no longer declared, in data written before), and ABSENT for a
 * declared field it lacks, kept per row (columnTable.ts) and put back when
 * the record is made (recordMaker.ts), so a record comes back as it was put.
 *
 * msgpack cannot carry ABSENT (a symbol): a snapshot stores an extras
 * object as `[its other fields, the names of the absent ones]`.
 */
import type { ValueChunks } from './tableImage.js'

/** In a row's extras: a declared field the record lacks. */
export const ABSENT = Symbol('absent')

export type Extras = Record<string, unknown>

export function addExtras(rec: Record<string, unknown>, extras: Extras): void {
  for (const name in extras) {
    const value = extras[name]
    if (value === ABSENT) delete rec[name]
    else rec[name] = value
  }
}

/** An extras value as stored (see the top). */
function storedExtras(extras: unknown): unknown {
  if (extras === null || typeof extras !== 'object') return extras
  const present: Extras = {}
  const absent: string[] = []
  for (const name in extras as Extras) {
    const value = (extras as Extras)[name]
    if (value === ABSENT) absent.push(name)
    else present[name] = value
  }
  return [present, absent]
}

/** storedExtras undone; an Error when `stored` is not what it makes. */
function extrasOfStored(stored: unknown): Extras | null {
  if (stored === null || stored === undefined) return null
  const [present, absent] = Array.isArray(stored) ? (stored as unknown[]) : []
  if (typeof present !== 'object' || present === null || !Array.isArray(absent)) throw new Error(`a row's extras are not [fields, absent names]`)
  const extras: Extras = { ...(present as Extras) }
  for (const name of absent) extras[String(name)] = ABSENT
  return extras
}

/** The stored form of an extras column's chunks (only the chunks with extras are copied). */
export function storedExtrasChunks(extras: ValueChunks): ValueChunks {
  return {
    kind: 'value',
    arrays: extras.arrays.map((values) => (values === null ? null : values.map(storedExtras))),
    constants: extras.constants.map((constant) => (typeof constant === 'symbol' ? null : storedExtras(constant))),
  }
}

/** storedExtrasChunks undone. */
export function extrasChunksOfStored(stored: ValueChunks): ValueChunks {
  return {
    kind: 'value',
    arrays: stored.arrays.map((values) => (values === null ? null : values.map(extrasOfStored))),
    constants: stored.constants.map(extrasOfStored),
  }
}
