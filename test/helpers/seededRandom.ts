/*
 * Random numbers from a seed, for tests whose choices must be replayable
 * (the fault test, test/cluster/nemesis.test.ts): the test prints its
 * seed, and the same seed deals the same choices again. Math.random cannot
 * be seeded; this is sfc32 (Chris Doty-Humphrey's Small Fast Counter, 128
 * bits of state, passes PractRand), its state filled from the seed by
 * splitmix32. Not for anything secret.
 *
 * `derive(label)` gives an independent generator for one consumer (a worker,
 * the nemesis), so that the choices of each depend on the seed and the
 * label only, not on how the consumers' turns interleave.
 */

export interface SeededRandom {
  readonly seed: number
  /** A number in [0, 1), as Math.random. */
  next(): number
  /** An integer in [low, high]. */
  between(low: number, high: number): number
  /** One of the items. */
  pick<T>(items: readonly T[]): T
  /** A shuffled copy. */
  shuffled<T>(items: readonly T[]): T[]
  /** Another generator, from this one's seed and the label. */
  derive(label: string): SeededRandom
}

/** Largest seed: seeds are unsigned 32-bit integers. */
export const MAX_SEED = 0xffff_ffff

/** A seed picked at random, for a run that names none. */
export function randomSeed(): number {
  return Math.floor(Math.random() * (MAX_SEED + 1))
}

/** The seed in `text` (decimal, 0 … 2^32 − 1); throws a message naming it when it is none. */
export function parseSeed(text: string, what: string): number {
  if (!/^\d{1,10}$/.test(text) || Number(text) > MAX_SEED) throw new Error(`${what} must be an integer from 0 to ${MAX_SEED}, got '${text}'`)
  return Number(text)
}

function splitmix32(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x9e3779b9) >>> 0
    let z = state
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b)
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35)
    return (z ^ (z >>> 16)) >>> 0
  }
}

/** FNV-1a, 32 bits: derive() seeds from the seed and the label. */
function hashLabel(label: string): number {
  let hash = 0x811c9dc5
  for (let index = 0; index < label.length; index += 1) hash = Math.imul(hash ^ label.charCodeAt(index), 0x01000193)
  return hash >>> 0
}

export function seededRandom(seed: number): SeededRandom {
  const fill = splitmix32(seed)
  let a = fill()
  let b = fill()
  let c = fill()
  let d = fill()
  const next = () => {
    const t = (((a + b) >>> 0) + d) >>> 0
    d = (d + 1) >>> 0
    a = b ^ (b >>> 9)
    b = (c + (c << 3)) >>> 0
    c = ((c << 21) | (c >>> 11)) >>> 0
    c = (c + t) >>> 0
    return t / 0x1_0000_0000
  }
  // The first outputs of a fresh state are discarded, as sfc32's author advises.
  for (let index = 0; index < 12; index += 1) next()
  const random: SeededRandom = {
    seed,
    next,
    between: (low, high) => low + Math.floor(next() * (high - low + 1)),
    pick: <T>(items: readonly T[]): T => {
      if (items.length === 0) throw new Error('pick from no items')
      return items[Math.floor(next() * items.length)] as T
    },
    shuffled: <T>(items: readonly T[]): T[] => {
      const copy = [...items]
      for (let index = copy.length - 1; index > 0; index -= 1) {
        const other = Math.floor(next() * (index + 1))
        ;[copy[index], copy[other]] = [copy[other] as T, copy[index] as T]
      }
      return copy
    },
    derive: (label) => seededRandom(hashLabel(`${seed}/${label}`)),
  }
  return random
}
