/*
 * SortedRecords (one key's records kept as added until the first ordered
 * read, then in the order of a date, then id, in chunks) against the
 * obvious model, a Map of id → record sorted on every check: random adds
 * (mostly at the end, as new time records come, some anywhere, some with a
 * null date), bulk adds, removals and replacements (same date, another
 * date). Chunks of four records make splits and emptied chunks frequent.
 * Before the first ordered read (at a random step) the records must be the
 * model's; from it on the ascending and descending reads must give exactly
 * the model's records — the very objects — in the order of `$orderby=start`
 * and `$orderby=start desc` (ties by id ascending both ways, nulls first
 * ascending and last descending). The packed-key sort is checked against a
 * comparator; removing or replacing a record the set does not hold as that
 * version fails an assertion.
 */
import t from 'tap'
import type { Rec } from '../../../src/domain/schema.js'
import { inDateOrder, SortedRecords } from '../../../src/engine/sortedRecords.js'
import { fuzzSeed, Random } from '../../helpers/fuzz.js'

const BASE_MS = 1_700_000_000_000

function rec(id: string, start: number | null, version = 1): Rec {
  return { id, start, version, createdAt: 0, updatedAt: 0, trashItem: null }
}

/** `$orderby=start` (descending: `start desc`), ties by id ascending. */
function modelOrder(recs: Iterable<Rec>, descending: boolean): Rec[] {
  const key = (one: Rec) => (typeof one.start === 'number' ? one.start : Number.NEGATIVE_INFINITY)
  return [...recs].sort((a, b) => {
    if (key(a) !== key(b)) return (key(a) < key(b) ? -1 : 1) * (descending ? -1 : 1)
    return a.id < b.id ? -1 : 1
  })
}

const shown = (recs: readonly Rec[]) => recs.map((one) => `${one.id}@${one.version}:${String(one.start)}`)

t.test('reads equal a sorted model over random operations, before and after the first ordered read', async (t) => {
  const seed = fuzzSeed()
  const random = new Random(seed)
  const set = new SortedRecords('start', 4)
  const model = new Map<string, Rec>()
  let latest = BASE_MS
  /** A start: mostly after every other (new time), else anywhere in the past, a few equal ones, some null. */
  const start = (): number | null => {
    const roll = random.next()
    if (roll < 0.1) return null
    if (roll < 0.5) return (latest += random.int(3) * 1000)
    return BASE_MS + random.int(40) * 1000
  }
  /** Until this step the set is only written and read unordered (kept as added); from it on, read in order. */
  const firstOrderedRead = 200 + random.int(800)
  let nextId = 0
  for (let step = 0; step < 5_000; step += 1) {
    const roll = random.next()
    if (roll < 0.35 || model.size === 0) {
      const one = rec(`r${String(nextId++).padStart(5, '0')}`, start())
      set.add(one)
      model.set(one.id, one)
    } else if (roll < 0.45) {
      const batch = Array.from({ length: random.int(12) }, () => rec(`r${String(nextId++).padStart(5, '0')}`, start()))
      set.addBulk(batch)
      for (const one of batch) model.set(one.id, one)
    } else if (roll < 0.75) {
      const before = model.get(random.pick([...model.keys()])) as Rec
      const after = rec(before.id, random.chance(0.5) ? (before.start as number | null) : start(), before.version + 1)
      set.replace(before, after)
      model.set(after.id, after)
    } else {
      const gone = model.get(random.pick([...model.keys()])) as Rec
      set.remove(gone)
      model.delete(gone.id)
    }
    const checks =
      step < firstOrderedRead
        ? [{ name: 'unordered', got: [...set.values()].sort((a, b) => (a.id < b.id ? -1 : 1)), expected: [...model.values()].sort((a, b) => (a.id < b.id ? -1 : 1)) }]
        : [
            { name: 'ascending', got: [...(set.inOrder(false) ?? [])], expected: modelOrder(model.values(), false) },
            { name: 'descending', got: [...(set.inOrder(true) ?? [])], expected: modelOrder(model.values(), true) },
          ]
    for (const { name, got, expected } of checks) {
      if (set.size !== model.size || got.length !== expected.length || got.some((one, at) => one !== expected[at])) {
        t.same({ records: shown(got), size: set.size }, { records: shown(expected), size: model.size }, `${name}: the current records (seed ${seed}, step ${step})`)
        return
      }
    }
  }
  t.pass(`5,000 random steps agree with the model (seed ${seed}; first ordered read at step ${firstOrderedRead})`)
})

t.test('records are put in order at the first ordered read, unless they are too many', async (t) => {
  const set = new SortedRecords('start', 4, 5)
  const recs = [rec('c', BASE_MS + 3), rec('a', BASE_MS + 1), rec('d', null), rec('b', BASE_MS + 1)]
  set.addBulk([...recs])
  t.same([...set.values()].map((one) => one.id), ['c', 'a', 'd', 'b'], 'values() reads them as added')
  t.same([...(set.inOrder(false) ?? [])].map((one) => one.id), ['d', 'a', 'b', 'c'])
  t.same([...(set.inOrder(true) ?? [])].map((one) => one.id), ['c', 'a', 'b', 'd'], 'equal dates by id ascending, the null last')
  set.add(rec('e', BASE_MS + 2))
  set.add(rec('f', BASE_MS))
  t.same([...(set.inOrder(false) ?? [])].map((one) => one.id), ['d', 'f', 'a', 'b', 'e', 'c'], 'kept in order beyond the limit once in order')
  const large = new SortedRecords('start', 4, 5)
  large.addBulk(Array.from({ length: 6 }, (_, at) => rec(`r${at}`, BASE_MS - at)))
  t.equal(large.inOrder(false), null, 'more records than may be sorted on a read: not read in order')
  t.equal(large.size, 6)
})

t.test('inDateOrder sorts by date then id, also over dates too far apart for its packed keys', async (t) => {
  const seed = fuzzSeed()
  const random = new Random(seed)
  for (const spanMs of [1_000, 86_400_000 * 365, 8.64e15]) {
    const recs = Array.from({ length: 500 }, (_, at) => rec(`r${random.int(300)}-${at}`, random.chance(0.1) ? null : Math.floor(random.next() * spanMs) - spanMs / 2))
    t.same(shown(inDateOrder(recs, 'start')), shown(modelOrder(recs, false)), `dates over ${spanMs} ms (seed ${seed})`)
  }
})

t.test('removing or replacing what the set does not hold as that version is refused', async (t) => {
  const set = new SortedRecords('start')
  const held = rec('r1', BASE_MS)
  set.add(held)
  t.same([...(set.inOrder(false) ?? [])], [held])
  t.throws(() => set.remove(rec('r1', BASE_MS)), /r1 is not held/, 'another object of the same record')
  t.throws(() => set.replace(rec('r2', BASE_MS), rec('r2', BASE_MS, 2)), /r2 is not held/)
  t.throws(() => set.add(rec('r1', BASE_MS, 2)), /r1 added twice/)
  t.same([...(set.inOrder(false) ?? [])], [held], 'the set still holds its record')
})
