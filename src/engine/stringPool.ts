/*
 * A tenant's texts, each held once: the values of every text and reference
 * column (columns.ts) are codes into this pool, not strings.
 *
 * A million time records say one of a few hundred things about a few
 * hundred projects of fifty users; as codes a record's references and
 * texts are a byte or two each (a code column picks the narrowest array a
 * chunk's codes fit), a filter compares integers instead of strings
 * (`project/id eq '…'` looks its literal up once), and a computation over
 * one text column can be done once per distinct text (filterCompiler.ts).
 *
 * Code 0 is null; a text's code is its position + 1. Each code counts the
 * rows that hold it; at 0 the text leaves the pool and its code is reused,
 * but not while a frozen view of the columns is open (`pin`): the view may
 * still read the code, which must keep meaning its text until it closes.
 *
 * A text is copied into a string of its own when it enters the pool
 * (textPool.ts ownCopy): a text decoded from the log or a snapshot is often
 * a view into a longer string, which the pool would otherwise keep alive.
 */
import { assert, assertionFailed } from '../assert.js'
import type { PoolImage } from './tableImage.js'
import type { Steps } from './steps.js'
import { ownCopy } from './textPool.js'

/** Texts restoreSteps takes between two pauses (about a millisecond: steps.ts). */
const RESTORE_STEP_TEXTS = 2048

export class StringPool {
  private readonly codes = new Map<string, number>()
  /** Position code - 1: the text (undefined where free). Read by made records directly (columnTable.ts); changed only here. */
  readonly texts: (string | undefined)[] = []
  /** Position code - 1: rows that hold the code. */
  private counts = new Int32Array(64)
  private readonly free: number[] = []
  /** Codes whose count fell to 0 while pinned: free once unpinned. */
  private readonly freedWhilePinned: number[] = []
  private pins = 0
  /**
   * Moves whenever a freed code is given to another text: until it moves, a code means the text it meant (what a
   * scan remembered per code, rowScan.ts, holds).
   */
  reuses = 0

  /** Distinct texts held. */
  get size(): number {
    return this.codes.size
  }

  /** The code of `text`; 0 when the pool does not hold it. */
  codeOf(text: string): number {
    return this.codes.get(text) ?? 0
  }

  /** The text of a code (not 0). */
  text(code: number): string {
    return this.texts[code - 1] as string
  }

  /** The code of `text`, counted once more (added to the pool when new). */
  take(text: string): number {
    let code = this.codes.get(text)
    if (code === undefined) {
      const own = ownCopy(text)
      const position = this.free.pop() ?? this.texts.length
      if (position < this.texts.length) this.reuses += 1
      if (position === this.texts.length) this.texts.push(own)
      else this.texts[position] = own
      code = position + 1
      this.codes.set(own, code)
      if (position >= this.counts.length) {
        const grown = new Int32Array(this.counts.length * 2)
        grown.set(this.counts)
        this.counts = grown
      }
      this.assertPositionsAccounted()
    }
    this.counts[code - 1] = (this.counts[code - 1] as number) + 1
    return code
  }

  /** Counts `code` once more (a row that copies another's code). */
  retain(code: number): void {
    if (code !== 0) this.counts[code - 1] = (this.counts[code - 1] as number) + 1
  }

  /** One row less holds `code` (0: nothing); the text goes at the last. */
  release(code: number): void {
    if (code === 0) return
    const position = code - 1
    const count = (this.counts[position] as number) - 1
    if (count < 0) assertionFailed(`string pool: code ${code} released more often than taken`)
    this.counts[position] = count
    if (count > 0) return
    this.codes.delete(this.texts[position] as string)
    if (this.pins > 0) this.freedWhilePinned.push(position)
    else {
      this.texts[position] = undefined
      this.free.push(position)
    }
    this.assertPositionsAccounted()
  }

  /** Every position holds a text with its code, is free, or waits for the last unpin (checked as a text comes or goes). */
  private assertPositionsAccounted(): void {
    const accounted = this.codes.size + this.free.length + this.freedWhilePinned.length
    if (accounted !== this.texts.length) assertionFailed(`string pool: ${accounted} positions accounted for, ${this.texts.length} made`)
  }

  /**
   * Takes a snapshot's texts (tableImage.ts PoolImage) into this empty pool, each at its code and held by no row yet:
   * the columns restored from the snapshot count theirs (`countChunk`), records loaded meanwhile take theirs as any
   * write does, and `finishRestoreSteps` then frees the codes no row holds. An Error when a text comes twice. Pauses every
   * RESTORE_STEP_TEXTS texts (a tenant may hold hundreds of thousands of distinct descriptions).
   */
  *restoreSteps(image: PoolImage): Steps<void> {
    assert(this.texts.length === 0, 'string pool: a snapshot restored into a pool that holds texts')
    this.counts = new Int32Array(Math.max(64, image.texts.length))
    for (const [position, text] of image.texts.entries()) {
      if (text === null) {
        this.texts.push(undefined)
        this.free.push(position)
        continue
      }
      const own = ownCopy(text)
      if (this.codes.has(own)) throw new Error(`string pool: the text of code ${position + 1} is the text of code ${this.codes.get(own) as number} too`)
      this.texts.push(own)
      this.codes.set(own, position + 1)
      if ((position + 1) % RESTORE_STEP_TEXTS === 0) yield
    }
    this.free.reverse()
  }

  /** Counts the codes of the live rows of a restored chunk (`codes`: its array, or its one code; `alive`: its rows' live flags). */
  countChunk(codes: ArrayLike<number> | number, alive: Uint8Array): void {
    const { counts, texts } = this
    const known = texts.length
    for (let offset = 0; offset < alive.length; offset += 1) {
      if (alive[offset] !== 1) continue
      const code = typeof codes === 'number' ? codes : (codes[offset] as number)
      if (code === 0) continue
      if (code > known || texts[code - 1] === undefined) throw new Error(`string pool: a restored row holds code ${code}, which names no text`)
      counts[code - 1] = (counts[code - 1] as number) + 1
    }
  }

  /** Ends a restore: the codes no row holds are free. Pauses as restoreSteps does. */
  *finishRestoreSteps(): Steps<void> {
    for (const [position, text] of this.texts.entries()) {
      if ((position + 1) % RESTORE_STEP_TEXTS === 0) yield
      if (text === undefined || (this.counts[position] as number) > 0) continue
      this.codes.delete(text)
      this.texts[position] = undefined
      this.free.push(position)
    }
    this.assertPositionsAccounted()
  }

  /** The texts as a snapshot stores them (tableImage.ts PoolImage): those no row holds as null. */
  image(): PoolImage {
    return { texts: Array.from(this.texts, (text, position) => (text !== undefined && (this.counts[position] as number) > 0 ? text : null)) }
  }

  /** A frozen view opens: no code is reused until it closes (unpin). */
  pin(): void {
    this.pins += 1
  }

  unpin(): void {
    this.pins -= 1
    if (this.pins < 0) assertionFailed('string pool: unpinned more often than pinned')
    if (this.pins > 0) return
    for (const position of this.freedWhilePinned) {
      this.texts[position] = undefined
      this.free.push(position)
    }
    this.freedWhilePinned.length = 0
  }

  /** How many rows hold `code` (tests). */
  countOf(code: number): number {
    return code === 0 ? 0 : (this.counts[code - 1] as number)
  }
}
