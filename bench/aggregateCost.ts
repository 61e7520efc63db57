/*
 * What the live aggregates cost a time-record write (issue 6: a write keeps
 * within 10% of its speed without aggregates).
 *
 * In-process, on the records of the fixture's snapshot: the tenant's small
 * collections (users, projects, tasks, …) are loaded, then N time records
 * are applied as `put` operations, the way a write applies them, twice:
 *
 *   apply       TenantState.applyOp with every observer (collection, indexes,
 *               append counters, live sums, report totals)
 *   aggregates  the same records given to the three observers alone, on a
 *               second state with the same small collections
 *
 * Without aggregates a write would cost apply − aggregates. The aggregates'
 * share of the whole durable write is figured against the engine's durable
 * write rate (actor.write through the log), measured by engineFigures.
 *
 *   node dist/bench/aggregateCost.js [--records 1000000] [--apply 200000]
 * prints one line `AGGREGATE_COST <json>` at the end.
 */
import type { Rec } from '../src/domain/schema.js'
import { TenantState } from '../src/engine/tenantState.js'
import { listSnapshots } from '../src/persist/snapshotFile.js'
import { readSnapshotFile } from '../src/persist/snapshotReading.js'
import { isMainModule, scriptArgs } from './cliOptions.js'
import { fixtureDataDir, readFixtureInfo } from './fixture.js'

const TIME_RECORD = 'TimeRecord'

export interface AggregateCost {
  applied: number
  applyMicrosPerWrite: number
  aggregatesMicrosPerWrite: number
  /** How much faster apply would be without aggregates. */
  applySlowdownPercent: number
}

function smallCollectionsLoaded(tenant: string, collections: Record<string, unknown[]>): TenantState {
  const state = new TenantState(tenant)
  for (const [type, recs] of Object.entries(collections)) {
    if (type === TIME_RECORD) continue
    for (const rec of recs) state.load(type, { ...(rec as Rec) })
  }
  state.finishLoad()
  return state
}

function elapsedMicros(job: () => void): number {
  const started = performance.now()
  job()
  return (performance.now() - started) * 1000
}

export function measureAggregateCost(records: number, applyCount: number): AggregateCost {
  const fixture = readFixtureInfo(records)
  if (fixture === null) throw new Error(`no fixture with ${records} records; run npm run bench:generate -- --records ${records}`)
  const newest = listSnapshots(fixtureDataDir(records), fixture.tenant)[0]
  if (newest === undefined) throw new Error('the fixture has no snapshot')
  const { body } = readSnapshotFile(newest.file)
  const timeRecords = (body.collections[TIME_RECORD] ?? []).slice(0, applyCount) as Rec[]
  if (timeRecords.length < applyCount) throw new Error(`the fixture holds only ${timeRecords.length} time records`)

  const withEverything = smallCollectionsLoaded(fixture.tenant, body.collections)
  const applyMicros = elapsedMicros(() => {
    for (const rec of timeRecords) withEverything.applyOp({ op: 'put', type: TIME_RECORD, rec: { ...rec } })
  })

  const observersOnly = smallCollectionsLoaded(fixture.tenant, body.collections)
  const copies = timeRecords.map((rec) => ({ ...rec }))
  const aggregatesMicros = elapsedMicros(() => {
    for (const rec of copies) {
      observersOnly.counters.onChange(TIME_RECORD, undefined, rec)
      observersOnly.sums.onChange(TIME_RECORD, undefined, rec)
      observersOnly.reports.onChange(TIME_RECORD, undefined, rec)
    }
  })

  return {
    applied: applyCount,
    applyMicrosPerWrite: applyMicros / applyCount,
    aggregatesMicrosPerWrite: aggregatesMicros / applyCount,
    applySlowdownPercent: (100 * aggregatesMicros) / (applyMicros - aggregatesMicros),
  }
}

if (isMainModule(import.meta.url)) {
  const args = scriptArgs({
    usage: 'node dist/bench/aggregateCost.js [options]',
    about: 'What the live report aggregates add to applying a time-record write, in process; prints AGGREGATE_COST {json}.',
    options: {
      records: { value: 'n', help: 'time records in the state first (default 1000000)' },
      apply: { value: 'n', help: 'writes applied and timed (default 200000)' },
    },
  })
  console.log(`AGGREGATE_COST ${JSON.stringify(measureAggregateCost(args.positiveInteger('records', 1_000_000), args.positiveInteger('apply', 200_000)))}`)
}
