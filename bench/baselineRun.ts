/*
 * CLI for the raw-stack baselines (see baselines.ts): measures them, prints a
 * table and writes the figures to bench/results/baselines-<timestamp>.json.
 *
 *   npx tsc -p . && node dist/bench/baselineRun.js \
 *     [--connections 50] [--duration 10] [--warmup 1] [--tool wrk|autocannon] [--lmdb-parent DIR]
 */
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { measureBaselines, type BaselineReport } from './baselines.js'
import { scriptArgs } from './cliOptions.js'
import type { LoadTool } from './loadgen.js'

function printTable(report: BaselineReport): void {
  console.log(`\n${report.machine.cpuModel} (${report.machine.cpus} cpus), node ${report.machine.node}`)
  console.log(['baseline'.padEnd(10), 'tool'.padEnd(10), 'conns'.padStart(5), 'req/s'.padStart(10), 'p50 ms'.padStart(8), 'p99 ms'.padStart(8), 'errors'.padStart(7), 'non2xx'.padStart(7)].join(' '))
  for (const f of report.figures) {
    console.log(
      [
        f.name.padEnd(10),
        f.tool.padEnd(10),
        String(f.connections).padStart(5),
        f.requestsPerSecond.toFixed(0).padStart(10),
        f.p50Ms.toFixed(2).padStart(8),
        f.p99Ms.toFixed(2).padStart(8),
        String(f.errors).padStart(7),
        String(f.non2xx).padStart(7),
      ].join(' '),
    )
  }
}

const args = scriptArgs({
  usage: 'npm run bench:baselines -- [options]     (or: node dist/bench/baselineRun.js [options])',
  about: 'Measures the raw-stack baselines (bare uWebSockets.js; uWebSockets.js with one LMDB put per request), prints a\ntable and writes bench/results/baselines-<time>.json.',
  options: {
    connections: { value: 'n', help: 'connections (default 50)' },
    duration: { value: 's', help: 'measured seconds per baseline (default 10)' },
    warmup: { value: 's', help: 'unmeasured load first, seconds (default 1)' },
    tool: { value: 'wrk|autocannon', help: 'load generator (default: wrk when it is on PATH)' },
    'lmdb-parent': { value: 'dir', help: "where the LMDB baseline's store goes (default: the system's temporary folder)" },
  },
})
const tool = args.text('tool')
if (tool !== undefined && tool !== 'wrk' && tool !== 'autocannon') args.refuse('--tool must be wrk or autocannon')
const lmdbParentDir = args.text('lmdb-parent')

const report = await measureBaselines({
  connections: args.positiveInteger('connections', 50),
  durationSeconds: args.positiveInteger('duration', 10),
  warmupSeconds: args.integer('warmup', 1, 0),
  ...(tool === undefined ? {} : { tool: tool as LoadTool }),
  ...(lmdbParentDir === undefined ? {} : { lmdbParentDir }),
})
printTable(report)

// dist/bench/baselineRun.js → <repo>/bench/results/
const resultsDir = fileURLToPath(new URL('../../bench/results/', import.meta.url))
fs.mkdirSync(resultsDir, { recursive: true })
const file = path.join(resultsDir, `baselines-${report.at.replace(/[:.]/g, '-')}.json`)
fs.writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`)
console.log(`\nwrote ${file}`)
