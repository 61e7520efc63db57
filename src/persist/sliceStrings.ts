/*
 * The texts of a snapshot slice, each written once (snapshot format 4).
 *
 * A million time records name a few thousand users, projects, tasks and
 * clients, and say one of a few thousand things. Written inline, those
 * texts were more than half of a snapshot (140 of 267 MB), and reading them
 * back made a fresh string per value, which recovery then looked up to
 * share (TenantState.load) and left to the GC.
 *
 * A format 4 slice carries each distinct text of its records once, in
 * `strings`, and its records carry a position in `strings` instead, in the
 * fields listed in `fields`: every field whose values in the slice are all
 * texts or null, except `id` (unique by nature, a table would only add to
 * it). Reading a slice puts the strings back, so every record of the slice
 * holds the same string object for the same text; the reader shares the
 * table's strings with the other slices' (`share`), once per distinct text
 * of a slice instead of once per record.
 *
 * The table is per slice (SLICE_RECORDS records), so a slice still decodes
 * on its own, and the table stays small: 2,484 strings for the 5,000 time
 * records of a bench slice.
 */

export interface SliceOfRecords {
  type: string
  recs: unknown[]
}

export interface SliceWithStrings extends SliceOfRecords {
  /** The fields whose texts are positions in `strings` (null stays null). */
  fields: string[]
  strings: string[]
}

type Fields = Record<string, unknown>

/** The fields of `recs` to write through the table: all values texts or null (at least one text), `id` excepted. */
function tableFields(recs: readonly Fields[]): string[] {
  const first = recs[0]
  if (first === undefined) return []
  const fields: string[] = []
  for (const name of Object.keys(first)) {
    if (name === 'id') continue
    let texts = 0
    let onlyTexts = true
    for (const rec of recs) {
      const value = rec[name]
      if (typeof value === 'string') texts += 1
      else if (value !== null && value !== undefined) {
        onlyTexts = false
        break
      }
    }
    if (onlyTexts && texts > 0) fields.push(name)
  }
  return fields
}

/** The slice to encode: copies of `recs` whose table fields hold positions in `strings`. */
export function withStringTable(type: string, recs: readonly Fields[]): SliceWithStrings {
  const fields = tableFields(recs)
  const strings: string[] = []
  const positions = new Map<string, number>()
  const copies = recs.map((rec) => {
    const copy = { ...rec }
    for (const name of fields) {
      const value = copy[name]
      if (typeof value !== 'string') continue
      let position = positions.get(value)
      if (position === undefined) {
        position = strings.length
        strings.push(value)
        positions.set(value, position)
      }
      copy[name] = position
    }
    return copy
  })
  return { type, fields, strings, recs: copies }
}

export class SliceStringsError extends Error {
  override name = 'SliceStringsError'
}

function isTexts(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'string')
}

/**
 * A decoded format 4 slice with its texts put back, in place, each of them the string `share` gives for it;
 * SliceStringsError when its table does not fit its records.
 */
export function resolveStringTable(slice: SliceOfRecords & { fields?: unknown; strings?: unknown }, share: (text: string) => string = (text) => text): SliceOfRecords {
  const { fields } = slice
  if (!isTexts(fields) || !isTexts(slice.strings)) throw new SliceStringsError('the slice has no string table')
  const strings = slice.strings.map(share)
  for (const rec of slice.recs as Fields[]) {
    for (const name of fields) {
      const position = rec[name]
      if (position === null || position === undefined) continue
      if (typeof position !== 'number' || !Number.isInteger(position) || position < 0 || position >= strings.length) {
        throw new SliceStringsError(`${slice.type}.${name} holds ${String(position)}, not a position in the slice's ${strings.length} strings`)
      }
      rec[name] = strings[position]
    }
  }
  return { type: slice.type, recs: slice.recs }
}
