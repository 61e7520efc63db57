/*
 * LogRuns, the sequence numbers of a tenant's PostgreSQL log kept as runs in
 * memory: appends extend the last run or start one after a gap, pruning cuts
 * from the front and truncation from the back, and every answer (first,
 * last, count, has, seqs) agrees with the plain set of numbers it stands for.
 */
import t from 'tap'
import { LogRuns } from '../../../src/persist/postgres/logRuns.js'

function answers(runs: LogRuns): { first: number; last: number; count: number; seqs: number[] } {
  return { first: runs.first, last: runs.last, count: runs.count, seqs: [...runs.seqs()] }
}

t.test('appends extend the last run, or start one after a gap; an old number is ignored', async (t) => {
  const runs = new LogRuns()
  t.same(answers(runs), { first: 0, last: 0, count: 0, seqs: [] }, 'empty')
  for (const seq of [1, 2, 3, 7, 8, 3, 8, 20]) runs.add(seq)
  t.same(answers(runs), { first: 1, last: 20, count: 6, seqs: [1, 2, 3, 7, 8, 20] })
  t.same(
    [1, 3, 4, 6, 7, 8, 9, 20, 21].map((seq) => runs.has(seq)),
    [true, true, false, false, true, true, false, true, false],
  )
})

t.test('pruning cuts from the front, within a run or across runs', async (t) => {
  const runs = LogRuns.of([
    { from: 1, to: 3 },
    { from: 7, to: 9 },
    { from: 20, to: 20 },
  ])
  runs.removeUpTo(0)
  t.same(answers(runs), { first: 1, last: 20, count: 7, seqs: [1, 2, 3, 7, 8, 9, 20] }, 'nothing below the first')
  runs.removeUpTo(2)
  t.same(answers(runs), { first: 3, last: 20, count: 5, seqs: [3, 7, 8, 9, 20] }, 'within the first run')
  runs.removeUpTo(7)
  t.same(answers(runs), { first: 8, last: 20, count: 3, seqs: [8, 9, 20] }, 'the first run gone, the second cut')
  runs.removeUpTo(25)
  t.same(answers(runs), { first: 0, last: 0, count: 0, seqs: [] }, 'everything')
})

t.test('truncation cuts from the back, within a run or across runs', async (t) => {
  const runs = LogRuns.of([
    { from: 1, to: 3 },
    { from: 7, to: 9 },
    { from: 20, to: 20 },
  ])
  runs.removeAfter(25)
  t.same(answers(runs), { first: 1, last: 20, count: 7, seqs: [1, 2, 3, 7, 8, 9, 20] }, 'nothing above the last')
  runs.removeAfter(8)
  t.same(answers(runs), { first: 1, last: 8, count: 5, seqs: [1, 2, 3, 7, 8] }, 'the last run gone, the second cut')
  runs.removeAfter(5)
  t.same(answers(runs), { first: 1, last: 3, count: 3, seqs: [1, 2, 3] }, 'in a gap')
  runs.add(4)
  t.same(answers(runs), { first: 1, last: 4, count: 4, seqs: [1, 2, 3, 4] }, 'appends go on after it')
  runs.removeAfter(0)
  t.same(answers(runs), { first: 0, last: 0, count: 0, seqs: [] }, 'everything')
})
