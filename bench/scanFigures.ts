/*
 * Scan and read figures of the engine, in-process, on the 1,000,000-record
 * fixture, for two builds measured alternately in the same minutes (the
 * machine is shared: only ratios between builds run side by side mean
 * much). Each round loads the fixture's tenant in a child process of one
 * build and times, as the owner (a superuser) sees them:
 *
 *   filterScan   $count of $filter=substringof('call', description): every
 *                time record read
 *   summaryUser  summary=user/id;count();sum(duration) over every time
 *                record (the query route's summary)
 *   get          a read of one time record by id (10,000 ids, random order)
 *   page         the list page of 100 of one project's time records,
 *                $orderby=start desc (the `list` scenario's plan)
 *
 * each the median of REPEATS runs, after the load's garbage is collected.
 *
 *   node --expose-gc dist/bench/scanFigures.js --against <other build's dist> [--records 1000000] [--rounds 2]
 * prints `SCAN_FIGURES <json>` with the rounds of both builds; a round runs as
 *   node dist/bench/scanFigures.js --measure <dist> --records N
 */
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { isMainModule, scriptArgs } from './cliOptions.js'
import { copyFixture, readFixtureInfo } from './fixture.js'

const REPEATS = 7
const GETS = 10_000

interface RoundFigures {
  build: string
  loadMs: number
  filterScanMs: number
  summaryUserMs: number
  getUs: number
  pageMs: number
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] as number
}

function timed(repeats: number, run: () => unknown): number {
  const times: number[] = []
  for (let round = 0; round < repeats; round += 1) {
    const started = performance.now()
    run()
    times.push(performance.now() - started)
  }
  return median(times)
}

/** One round in this process: the build at `dist` (its src/ modules) on a copy of the fixture. */
async function measure(dist: string, records: number): Promise<RoundFigures> {
  const fixture = readFixtureInfo(records)
  if (fixture === null) throw new Error(`no fixture with ${records} records; run npm run bench:generate -- --records ${records}`)
  const load = (module: string) => import(pathToFileURL(path.join(dist, 'src', module)).href)
  const [{ loadConfig }, storage, { recoverTenant }, { planList }, summary, { TimeRecord }, { runNow }] = await Promise.all([
    load('config.js'),
    // A build from before the rename (the module was persist/logStore, its class LogStore) is measured too.
    load('persist/embeddedStorage.js').catch(() => load('persist/logStore.js')),
    load('tenants/recovery.js'),
    load('query/plan.js'),
    load('query/summary.js'),
    load('domain/resources/timeRecord.js'),
    load('engine/steps.js'),
  ])
  const dataDir = copyFixture(records, 'scan')
  try {
    const config = loadConfig({ DATA_DIR: dataDir, API_KEYS: 'unused', QUIET: '1' })
    const store = (storage.EmbeddedStorage ?? storage.LogStore).open(dataDir, config.lmdbMapSizeBytes)
    try {
      const started = performance.now()
      const { state } = recoverTenant(fixture.tenant, store)
      const loadMs = performance.now() - started
      // The load's garbage is collected before the timed reads (the child runs with --expose-gc): otherwise its
      // collection runs during the first reads, which then measure the collector more than the read.
      ;(globalThis as { gc?: () => void }).gc?.()
      const owner = [...state.collection('Account').values()][0].owner as string
      const caller = { userId: owner, superuser: true }
      const all = { kind: 'all' }
      const filterPlan = planList(TimeRecord, new Map([['$filter', "substringof('call', description)"]]))
      const filterScanMs = timed(REPEATS, () => filterPlan.count(state, caller, all))
      const summaryPlan = summary.parseSummary(TimeRecord, 'user/id;count();sum(duration)')
      const everything = planList(TimeRecord, new Map())
      // Each build's own summary: over blocks of rows, over rows (the first column store), or over records (before it).
      const summaryUserMs = timed(REPEATS, () =>
        summary.summaryOfBlocksSteps !== undefined
          ? runNow(summary.summaryOfBlocksSteps(summaryPlan, (visit: unknown) => everything.eachMatchingBlock(state, caller, all, visit), state))
          : summary.summaryOfRowsSteps !== undefined
            ? runNow(summary.summaryOfRowsSteps(summaryPlan, (visit: unknown) => everything.eachMatchingRow(state, caller, all, visit), state))
            : runNow(summary.summarySteps(summaryPlan, (visit: unknown) => everything.eachMatching(state, caller, all, visit), state)),
      )
      const ids: string[] = []
      for (const rec of state.collection('TimeRecord').values()) if (ids.length < GETS * 10) ids.push(rec.id as string)
      const picked = Array.from({ length: GETS }, (_, index) => ids[(index * 7919) % ids.length] as string)
      const getAll = (): void => {
        for (const id of picked) state.get('TimeRecord', id)
      }
      const getUs = (timed(REPEATS, getAll) * 1000) / GETS
      const project = [...fixture.projects].sort((a, b) => b.records - a.records)[0]?.id as string
      const pagePlan = planList(
        TimeRecord,
        new Map([
          ['$filter', `project/id eq '${project}'`],
          ['$orderby', 'start desc'],
          ['$top', '100'],
        ]),
      )
      pagePlan.run(state, caller, all)
      const pageMs = timed(REPEATS * 5, () => pagePlan.run(state, caller, all))
      return { build: dist, loadMs, filterScanMs, summaryUserMs, getUs, pageMs }
    } finally {
      await store.close()
    }
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
}

function roundInChild(dist: string, records: number): RoundFigures {
  const script = fileURLToPath(import.meta.url)
  const stdout = execFileSync(process.execPath, ['--expose-gc', script, '--measure', dist, '--records', String(records)], { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 })
  const line = stdout.split('\n').find((text) => text.startsWith('SCAN_ROUND '))
  if (line === undefined) throw new Error(`the round printed no figures:\n${stdout}`)
  return JSON.parse(line.slice('SCAN_ROUND '.length)) as RoundFigures
}

if (isMainModule(import.meta.url)) {
  const args = scriptArgs({
    usage: "node --expose-gc dist/bench/scanFigures.js --against <other build's dist> [--records 1000000] [--rounds 2]",
    about:
      "Loads the fixture's tenant in a child process of each build alternately and prints SCAN_FIGURES <json>: load,\nthe scanning $filter, the summary by user, reads by id and the list page, each the median of its repeats.",
    options: {
      against: { value: 'dist', help: "the other build's compiled tree (its dist/)" },
      records: { value: 'n', help: 'the fixture (default 1000000)' },
      rounds: { value: 'n', help: 'rounds; each runs both builds once (default 2)' },
      measure: { value: 'dist', help: 'one round of the build at <dist> in this process (how a round runs)' },
    },
  })
  const records = args.positiveInteger('records', 1_000_000)
  const measured = args.text('measure')
  if (measured !== undefined) console.log(`SCAN_ROUND ${JSON.stringify(await measure(measured, records))}`)
  else {
    const against = args.text('against') ?? args.refuse('--against <dist of the other build> is needed')
    const self = path.resolve(fileURLToPath(new URL('..', import.meta.url)))
    const rounds: RoundFigures[] = []
    for (let round = 0; round < args.positiveInteger('rounds', 2); round += 1) {
      for (const dist of [path.resolve(against), self]) {
        rounds.push(roundInChild(dist, records))
        console.error(
          JSON.stringify(rounds.at(-1)),
          'load',
          os
            .loadavg()
            .map((load) => load.toFixed(1))
            .join(' '),
        )
      }
    }
    console.log(`SCAN_FIGURES ${JSON.stringify({ records, loadAverage: os.loadavg(), rounds })}`)
  }
}
