/*
 * Counts and summaries of every row (query/blockScan.ts, codeGroups.ts)
 * against the same reads over records (the compiled filter's `test`,
 * summary.ts runSummary), on a collection of several chunks whose rows
 * differ chunk by chunk: a chunk where every record is in the trash (its
 * trash column one code), chunks where some are, removed rows, a chunk
 * whose durations are doubles and one where they are integers or null, a
 * text the description column does not hold (a misfit), and both a null
 * description and the text 'null' (one group 'null', as over records).
 */
import t from 'tap'
import { buildRecord } from '../../../src/domain/recordMaking.js'
import { TimeRecord } from '../../../src/domain/resources/timeRecord.js'
import type { Rec } from '../../../src/domain/schema.js'
import { CHUNK_ROWS } from '../../../src/engine/rowChunks.js'
import { runNow } from '../../../src/engine/steps.js'
import { TenantState } from '../../../src/engine/tenantState.js'
import { compiledFilter } from '../../../src/query/compiledFilters.js'
import { planList, type ListScope } from '../../../src/query/plan.js'
import { parseSummary, runSummary, summaryOfBlocksSteps } from '../../../src/query/summary.js'

const USERS = ['7d0f2b64-1c1e-4a43-9c1f-000000000001', '7d0f2b64-1c1e-4a43-9c1f-000000000002', '7d0f2b64-1c1e-4a43-9c1f-000000000003']
const DESCRIPTIONS = ['Support call', 'Code review', 'null', null, 'Phone call back', '']
const ROWS = 3 * CHUNK_ROWS + 100
const caller = { userId: USERS[0] as string, superuser: true }

/** `misfit`: with a number in one row's description. */
function filled(misfit: boolean): TenantState {
  const state = new TenantState('blockscan')
  const ids: string[] = []
  for (let row = 0; row < ROWS; row += 1) {
    const chunk = Math.floor(row / CHUNK_ROWS)
    const rec = buildRecord(
      TimeRecord,
      {
        user: USERS[row % 3],
        description: DESCRIPTIONS[(row * 7) % DESCRIPTIONS.length],
        duration: chunk === 0 ? row + 0.25 : row % 11 === 0 ? null : row * 3,
        start: 1_700_000_000_000 + row * 60_000,
      },
      0,
    )
    // Chunk 1: every record in the trash; chunk 2: every fifth.
    if (chunk === 1 || (chunk === 2 && row % 5 === 0)) rec.trashItem = 'trash-item'
    state.applyOp({ op: 'put', type: 'TimeRecord', rec })
    ids.push(rec.id)
  }
  for (let row = 10; row < ROWS; row += 97) state.applyOp({ op: 'del', type: 'TimeRecord', id: ids[row] as string })
  const odd = state.get('TimeRecord', ids[11] as string) as Rec
  if (misfit) state.applyOp({ op: 'put', type: 'TimeRecord', rec: { ...odd, description: 42 } as unknown as Rec })
  return state
}

function expectedOf(state: TenantState, filter: string | null, trashed: boolean): Rec[] {
  const compiled = filter === null ? null : compiledFilter(TimeRecord, filter)
  return [...state.collection('TimeRecord').values()].filter((rec) => (rec.trashItem !== null) === trashed && (compiled === null || compiled.test(rec, state)))
}

const FILTERS = [
  null,
  "substringof('call', description)",
  "not substringof('call', description)",
  "substringof('call', description) and duration gt 6000",
  "description eq 'null' or description eq null",
  `user/id eq '${USERS[1]}'`,
  `user/id eq '${USERS[1]}' and substringof('review', description)`,
]
const SUMMARIES = ['count()', 'user/id;count();sum(duration);min(duration);max(duration);avg(start)', 'description;count();sum(duration)']

t.test('counts and summaries of every row are those over the records', async (t) => {
  for (const misfit of [false, true]) {
    const state = filled(misfit)
    for (const trashed of [false, true]) {
      const scope: ListScope = trashed ? { kind: 'trashed' } : { kind: 'all' }
      for (const filter of FILTERS) {
        const plan = planList(TimeRecord, new Map(filter === null ? [] : [['$filter', filter]]))
        const expected = expectedOf(state, filter, trashed)
        // Twice: the second read finds the answers the first remembered per code.
        for (const read of [1, 2]) {
          t.equal(plan.count(state, caller, scope), expected.length, `count of ${filter} (trashed ${trashed}, misfit ${misfit}), read ${read}`)
          for (const summary of SUMMARIES) {
            const summaryPlan = parseSummary(TimeRecord, summary)
            const got = runNow(summaryOfBlocksSteps(summaryPlan, (visit) => plan.eachMatchingBlock(state, caller, scope, visit), state))
            t.same(got, runSummary(summaryPlan, expected, state), `${summary} of ${filter} (trashed ${trashed}, misfit ${misfit}), read ${read}`)
          }
        }
        const visited: string[] = []
        runNow(plan.eachMatching(state, caller, scope, (rec) => visited.push(rec.id)))
        t.same(
          visited,
          expected.map((rec) => rec.id),
          `the records of ${filter} (trashed ${trashed}, misfit ${misfit}) in the collection's order`,
        )
      }
    }
  }
})

t.test("a null description and the text 'null' make one group, as over records", async (t) => {
  const state = filled(false)
  const summaryPlan = parseSummary(TimeRecord, 'description;count()')
  const plan = planList(TimeRecord, new Map())
  const got = runNow(summaryOfBlocksSteps(summaryPlan, (visit) => plan.eachMatchingBlock(state, caller, { kind: 'all' }, visit), state))
  const nulls = got.filter((entry) => entry.key === 'null')
  t.equal(nulls.length, 1)
  t.equal(nulls[0]?.summaries[0]?.value, String(expectedOf(state, null, false).filter((rec) => rec.description === null || rec.description === 'null').length))
})
