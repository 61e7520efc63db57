/*
 * The node's budget of bytes waiting for all change feed streams
 * (src/http/changes/feedBudget.ts), without sockets: past the budget the
 * streams holding the most are cut first, only as many as it takes, once
 * per turn however many streams grew in it, after reading what each holds
 * now; a stream holding nothing costs nothing; a budget of 0 cuts nothing.
 */
import t from 'tap'
import { FeedBudget, type BudgetedStream } from '../../../src/http/changes/feedBudget.js'

class FakeStream implements BudgetedStream {
  cutCount = 0
  constructor(
    readonly name: string,
    public bytes: number,
    private readonly budget: FeedBudget,
  ) {}
  bufferedBytes(): number {
    return this.bytes
  }
  cut(): void {
    this.cutCount += 1
    this.bytes = 0
    this.budget.gone(this)
  }
  /** Grows by `bytes` and tells the budget, as an outlet does after a send. */
  grow(bytes: number): void {
    this.bytes += bytes
    this.budget.holds(this, this.bytes)
  }
}

const turn = () => new Promise((resolve) => setImmediate(resolve))

t.test('past the budget the streams holding the most are cut first, only as many as it takes', async (t) => {
  const budget = new FeedBudget(1000)
  const sizes = [100, 400, 300, 250, 50]
  const streams = sizes.map((_, index) => new FakeStream(`s${index}`, 0, budget))
  streams.forEach((stream, index) => {
    stream.grow(sizes[index] as number)
  })
  t.equal(budget.heldBytes, 1100)
  t.same(
    streams.map((stream) => stream.cutCount),
    [0, 0, 0, 0, 0],
    'not within the turn that went past it',
  )
  await turn()
  t.same(
    streams.map((stream) => stream.cutCount),
    [0, 1, 0, 0, 0],
    'the one holding the most, and that was enough',
  )
  t.equal(budget.heldBytes, 700)
  t.equal(budget.cuts, 1)
  // All grow by 150 in one turn: 1300 held, so 300 must go: the next heaviest (300 + 150 = 450) alone does it.
  for (const stream of streams) if (stream.cutCount === 0) stream.grow(150)
  await turn()
  t.same(
    streams.map((stream) => stream.cutCount),
    [0, 1, 1, 0, 0],
  )
  t.equal(budget.heldBytes, 850)
})

t.test('the budget reads what each holds now: a stream that was taken from meanwhile is not cut for it', async (t) => {
  const budget = new FeedBudget(1000)
  const drained = new FakeStream('drained', 0, budget)
  const slow = new FakeStream('slow', 0, budget)
  drained.grow(900)
  slow.grow(600)
  // The socket took what the first held, without telling yet.
  drained.bytes = 0
  await turn()
  t.equal(drained.cutCount, 0)
  t.equal(slow.cutCount, 0, 'within the budget once read anew')
  t.equal(budget.heldBytes, 600)
})

t.test('streams holding nothing are not tracked; a budget of 0 cuts nothing', async (t) => {
  const budget = new FeedBudget(1000)
  const idle = new FakeStream('idle', 0, budget)
  idle.grow(0)
  t.equal(budget.heldBytes, 0)
  const off = new FeedBudget(0)
  const huge = new FakeStream('huge', 0, off)
  huge.grow(10 ** 9)
  await turn()
  t.equal(huge.cutCount, 0)
  t.equal(off.cuts, 0)
})
