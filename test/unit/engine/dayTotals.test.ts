/*
 * DayTotals (the paged day sums under every report) against the obvious
 * model, a Map of day → totals: random adds and removals over days on both
 * sides of the epoch, records without a start, copies and subtraction, then
 * sums over random ranges, unbounded and half-bounded ones included. Also:
 * a page whose records are all removed is dropped and `isEmpty` follows.
 */
import t from 'tap'
import { DayTotals, emptyTotals, NO_DAY, withoutDays, type Totals } from '../../../src/engine/dayTotals.js'
import { fuzzSeed, Random } from '../../helpers/fuzz.js'

type Model = Map<number, Totals>

function modelAdd(model: Model, day: number, totals: Totals, sign: number): void {
  const target = model.get(day) ?? emptyTotals()
  target.count += sign * totals.count
  target.timeMs += sign * totals.timeMs
  target.billableTimeMs += sign * totals.billableTimeMs
  target.effectiveTimeMs += sign * totals.effectiveTimeMs
  target.moneyCents += sign * totals.moneyCents
  if (target.count === 0) model.delete(day)
  else model.set(day, target)
}

function modelSum(model: Model, fromDay: number | null, toDay: number | null): Totals {
  const into = emptyTotals()
  for (const [day, totals] of model) {
    const counted = day === NO_DAY ? fromDay === null && toDay === null : (fromDay === null || day >= fromDay) && (toDay === null || day < toDay)
    if (counted) modelAdd(new Map([[0, into]]), 0, totals, 1)
  }
  return into
}

function randomTotals(random: Random): Totals {
  const timeMs = random.int(8) * 900_000
  return { count: 1, timeMs, billableTimeMs: random.chance(0.5) ? timeMs : 0, effectiveTimeMs: random.chance(0.8) ? timeMs : 0, moneyCents: random.int(100_000) }
}

function randomDay(random: Random): number {
  return random.chance(0.05) ? NO_DAY : random.int(2_000) - 1_000 + (random.chance(0.1) ? 50_000 : 0)
}

function randomBound(random: Random): number | null {
  return random.chance(0.15) ? null : random.int(2_400) - 1_200
}

t.test('sums equal a day map over random adds, removals and ranges', async (t) => {
  const seed = fuzzSeed()
  const random = new Random(seed)
  for (let round = 0; round < 20; round += 1) {
    const days = new DayTotals()
    const model: Model = new Map()
    const added: [number, Totals][] = []
    for (let step = 0; step < 500; step += 1) {
      if (added.length > 0 && random.chance(0.3)) {
        const [day, totals] = added.splice(random.int(added.length), 1)[0] as [number, Totals]
        days.add(day, totals, -1)
        modelAdd(model, day, totals, -1)
      } else {
        const entry: [number, Totals] = [randomDay(random), randomTotals(random)]
        added.push(entry)
        days.add(entry[0], entry[1])
        modelAdd(model, entry[0], entry[1], 1)
      }
    }
    t.equal(days.isEmpty, added.length === 0, `isEmpty (seed ${seed})`)
    for (let query = 0; query < 50; query += 1) {
      const fromDay = randomBound(random)
      const toDay = randomBound(random)
      if (!t.same(days.sum(fromDay, toDay), modelSum(model, fromDay, toDay), `sum [${fromDay}, ${toDay}) (seed ${seed})`)) return
    }
  }
})

t.test('withoutDays subtracts exactly and leaves its base alone', async (t) => {
  const random = new Random(fuzzSeed())
  const base = new DayTotals()
  const part = new DayTotals()
  const rest = new DayTotals()
  for (let step = 0; step < 300; step += 1) {
    const day = randomDay(random)
    const totals = randomTotals(random)
    base.add(day, totals)
    ;(random.chance(0.4) ? part : rest).add(day, totals)
  }
  const before = base.sum(null, null)
  const difference = withoutDays(base, [part])
  t.same(difference.sum(null, null), rest.sum(null, null))
  t.same(difference.sum(-300, 300), rest.sum(-300, 300))
  t.same(base.sum(null, null), before, 'the base is unchanged')
  t.ok(withoutDays(base, [part, rest]).isEmpty, 'taking every part away leaves nothing')
})

t.test('removing the last record empties the totals; clear empties everything', async (t) => {
  const days = new DayTotals()
  const totals: Totals = { count: 1, timeMs: 3_600_000, billableTimeMs: 0, effectiveTimeMs: 3_600_000, moneyCents: 1250 }
  days.add(20_000, totals)
  days.add(NO_DAY, totals)
  t.same(days.sum(20_000, 20_001), totals)
  t.same(days.sum(19_000, null), totals, 'a half-bounded range leaves out records without a start')
  t.same(days.sum(null, null).count, 2)
  days.add(20_000, totals, -1)
  t.notOk(days.isEmpty)
  t.same(days.sum(null, 30_000), emptyTotals())
  days.add(NO_DAY, totals, -1)
  t.ok(days.isEmpty)
  days.add(-5, totals)
  days.clear()
  t.ok(days.isEmpty)
  t.same(days.sum(null, null), emptyTotals())
})

t.test('a frozen view keeps the totals of its moment while adds, removals, subtraction and clear go on', async (t) => {
  const seed = fuzzSeed()
  const random = new Random(seed)
  for (let round = 0; round < 20; round += 1) {
    const days = new DayTotals()
    const added: [number, Totals][] = []
    const step = () => {
      if (added.length > 0 && random.chance(0.4)) {
        const [day, totals] = added.splice(random.int(added.length), 1)[0] as [number, Totals]
        days.add(day, totals, -1)
      } else {
        const entry: [number, Totals] = [randomDay(random), randomTotals(random)]
        added.push(entry)
        days.add(entry[0], entry[1])
      }
    }
    for (let done = 0; done < 300; done += 1) step()
    const atFreeze = days.stored()
    const frozen = days.frozen()
    const second = random.chance(0.5) ? days.frozen() : null
    for (let done = 0; done < 300; done += 1) step()
    if (random.chance(0.3)) days.subtract(withoutDays(days, []))
    else if (random.chance(0.2)) days.clear()
    const live = days.stored()
    if (!t.same(frozen.stored(), atFreeze, `the frozen view is the moment's (seed ${seed})`)) return
    if (second !== null) t.same(second.stored(), atFreeze, `a second view too (seed ${seed})`)
    frozen.release()
    second?.release()
    t.same(days.stored(), live, `the live totals went on (seed ${seed})`)
  }
})
