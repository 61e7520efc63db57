/*
 * runInTurns runs steps for a turn's budget, then lets the event loop go
 * on: many short steps share a turn (a load of a million records is tens of
 * thousands of steps of a millisecond or less), and a step longer than the
 * budget ends its turn, so other work runs between any two such steps.
 * Either way it gives what runNow gives.
 */
import t from 'tap'
import { runInTurns, runNow, type Steps } from '../../../src/engine/steps.js'

function* counting(steps: number, eachMs = 0): Steps<number> {
  let sum = 0
  for (let step = 0; step < steps; step += 1) {
    const until = performance.now() + eachMs
    while (performance.now() < until) sum += 0
    sum += step
    yield
  }
  return sum
}

/** `run`'s result, and the event-loop turns other work got while it ran (a setImmediate chain counts them). */
async function withTurns<T>(run: () => Promise<T>): Promise<{ result: T; turns: number }> {
  let turns = 0
  let running = true
  const tick = () => {
    if (!running) return
    turns += 1
    setImmediate(tick)
  }
  setImmediate(tick)
  const result = await run()
  running = false
  return { result, turns }
}

t.test('many short steps share a turn, and the answer is runNow’s', async (t) => {
  const steps = 10_000
  const { result, turns } = await withTurns(() => runInTurns(counting(steps)))
  t.equal(result, runNow(counting(steps)))
  t.ok(turns < steps / 10, `${turns} turns for ${steps} steps`)
})

t.test('a step longer than the budget ends its turn: other work runs between any two of them', async (t) => {
  const steps = 5
  const { result, turns } = await withTurns(() => runInTurns(counting(steps, 6), 4))
  t.equal(result, runNow(counting(steps)))
  t.ok(turns >= steps - 1, `${turns} turns for ${steps} steps`)
})
