/*
 * A boolean field's values by row (columns.ts says how columns are kept):
 * a chunk is a Uint8Array of FLAG_NULL, FLAG_FALSE or FLAG_TRUE, or no
 * array while every row of the chunk holds one flag.
 */
import { ChunkStamps, copyOf, withMisfit, withoutMisfit, type Column, type ColumnReader } from './columns.js'
import { CHUNK_BITS, CHUNK_MASK, CHUNK_ROWS, type FreezeState } from './rowChunks.js'
import type { FlagChunks } from './tableImage.js'

export const FLAG_NULL = 0
const FLAG_FALSE = 1
export const FLAG_TRUE = 2

function flagOf(value: boolean | null): number {
  return value === null ? FLAG_NULL : value ? FLAG_TRUE : FLAG_FALSE
}

export class FlagView implements ColumnReader {
  constructor(
    readonly arrays: (Uint8Array | null)[],
    readonly constants: (number | undefined)[],
    public misfits: Map<number, unknown> | null,
  ) {}

  get(row: number): unknown {
    if (this.misfits?.has(row)) return this.misfits.get(row)
    const flag = this.flag(row)
    return flag === FLAG_NULL ? null : flag === FLAG_TRUE
  }

  /** FLAG_NULL (or a misfit), FLAG_FALSE or FLAG_TRUE. */
  flag(row: number): number {
    const chunk = row >>> CHUNK_BITS
    const flags = this.arrays[chunk]
    if (flags !== null && flags !== undefined) return flags[row & CHUNK_MASK] as number
    return this.constants[chunk] ?? FLAG_NULL
  }
}

export class FlagColumn extends FlagView implements Column {
  private readonly stamps: ChunkStamps

  constructor(freeze: FreezeState) {
    super([], [], null)
    this.stamps = new ChunkStamps(freeze)
  }

  write(row: number, value: unknown, fresh: boolean): void {
    const chunk = row >>> CHUNK_BITS
    const at = row & CHUNK_MASK
    const { arrays, constants } = this
    while (constants.length <= chunk) {
      arrays.push(null)
      constants.push(undefined)
      this.stamps.add()
    }
    const fits = value === null || typeof value === 'boolean'
    this.misfits = fits ? withoutMisfit(this.misfits, row) : withMisfit(this.misfits, row, value)
    const flag = fits ? flagOf(value) : FLAG_NULL
    let flags = arrays[chunk]
    if (flags !== null && flags !== undefined) {
      if (!fresh && this.stamps.shared(chunk, row)) {
        flags = flags.slice()
        arrays[chunk] = flags
        this.stamps.stamp(chunk)
      }
      flags[at] = flag
      return
    }
    const constant = constants[chunk]
    if (constant === undefined) {
      constants[chunk] = flag
      return
    }
    if (constant === flag) return
    const made = new Uint8Array(CHUNK_ROWS).fill(constant)
    made[at] = flag
    arrays[chunk] = made
    constants[chunk] = FLAG_NULL
    this.stamps.stamp(chunk)
  }

  clear(row: number): void {
    this.misfits = withoutMisfit(this.misfits, row)
  }

  dropChunk(chunk: number): void {
    this.arrays[chunk] = null
    this.constants[chunk] = FLAG_NULL
  }

  /** Takes a snapshot's chunks (tableImage.ts) as its own; the column held no rows. */
  adopt(image: FlagChunks): void {
    this.stamps.adopt([this.arrays, this.constants], [image.arrays, image.constants])
    this.misfits = image.misfits
  }

  frozen(): FlagView {
    return new FlagView(this.arrays.slice(), this.constants.slice(), copyOf(this.misfits))
  }

  arrayBytes(): number {
    let bytes = 0
    for (const flags of this.arrays) bytes += flags?.byteLength ?? 0
    return bytes
  }
}
