/*
 * One string object for each repeated text of the records being loaded.
 *
 * Decoding a snapshot gives each slice (format 4) or each record (older
 * formats) its own copy of each text, even when a million time records say
 * one of a few dozen things ("Support call") about a few hundred projects.
 * The pool hands out the first copy of a text for every later equal one, so
 * the copies can be collected: less memory, and a scan that reads the text
 * of every record (`substringof(…, description)`) touches a few hot strings
 * instead of a million scattered ones — on 1,000,000 records that halves
 * the scan.
 *
 * The pooled copy is a string of its own. msgpackr reads the short texts
 * of a slice as slices of one longer string, and V8 keeps each as a view
 * into it: the view holds the longer string in memory, and `===` between
 * a view and another string takes a slow path (29 ns against 4 in a
 * micro-benchmark; a `$filter=project/id eq '…'` compares with every
 * record it visits).
 *
 * The pool lives while one snapshot file is read (snapshotReading.ts) and is
 * dropped after it; it keeps at most MAX_TEXTS texts of at most
 * MAX_TEXT_CHARS characters, so unique texts cost one bounded table, not
 * one entry per record.
 */

export const MAX_TEXTS = 65_536
export const MAX_TEXT_CHARS = 256

export class TextPool {
  private readonly texts = new Map<string, string>()

  /** Texts pooled. */
  get size(): number {
    return this.texts.size
  }

  /** The pooled string equal to `text` (a copy of its own when `text` is the first; `text` itself when it is not pooled). */
  share(text: string): string {
    if (text.length > MAX_TEXT_CHARS) return text
    const pooled = this.texts.get(text)
    if (pooled !== undefined) return pooled
    if (this.texts.size >= MAX_TEXTS) return text
    const own = ownCopy(text)
    this.texts.set(own, own)
    return own
  }
}

/**
 * `text` as a string of its own, not a view into a longer one (see the
 * top). Through JSON rather than UTF-8 bytes, which would turn a lone
 * surrogate into U+FFFD: JSON.stringify escapes it and JSON.parse gives it
 * back.
 */
export function ownCopy(text: string): string {
  return JSON.parse(JSON.stringify(text)) as string
}
