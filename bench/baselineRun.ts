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
import type { LoadTool } from './loadgen.js'

function parseArgs(argv: readonly string[]): Map<string, string> {
  const args = new Map<string, string>()
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i]
    const value = argv[i + 1]
    if (key === undefined || !key.startsWith('--') || value === undefined) throw new Error(`usage: --name value pairs, got '${argv.join(' ')}'`)
    args.set(key.slice(2), value)
  }
  return args
}

function positive(args: Map<string, string>, name: string, fallback: number): number {
  const value = Number(args.get(name) ?? fallback)
  if (!Number.isFinite(value) || value < 0) throw new Error(`--${name} must be a non-negative number`)
  return value
}

function printTable(report: BaselineReport): void {
  console.log(`\n${report.machine.cpuModel} (${report.machine.cpus} cpus), node ${report.machine.node}`)
  console.log(['baseline'.padEnd(10), 'tool'.padEnd(10), 'conns'.padStart(5), 'req/s'.padStart(10), 'p50 ms'.padStart(8), 'p99 ms'.padStart(8), 'errors'.padStart(7), 'non2xx'.padStart(7)].join(' '))
  for (const f of report.figures) {
    console.log([
      f.name.padEnd(10), f.tool.padEnd(10), String(f.connections).padStart(5), f.requestsPerSecond.toFixed(0).padStart(10),
      f.p50Ms.toFixed(2).padStart(8), f.p99Ms.toFixed(2).padStart(8), String(f.errors).padStart(7), String(f.non2xx).padStart(7),
    ].join(' '))
  }
}

const args = parseArgs(process.argv.slice(2))
const tool = args.get('tool')
if (tool !== undefined && tool !== 'wrk' && tool !== 'autocannon') throw new Error('--tool must be wrk or autocannon')
const lmdbParentDir = args.get('lmdb-parent')

const report = await measureBaselines({
  connections: positive(args, 'connections', 50),
  durationSeconds: positive(args, 'duration', 10),
  warmupSeconds: positive(args, 'warmup', 1),
  ...(tool === undefined ? {} : { tool: tool as LoadTool }),
  ...(lmdbParentDir === undefined ? {} : { lmdbParentDir }),
})
printTable(report)

// dist/bench/baselineRun.js → <repo>/bench/results/
const resultsDir = fileURLToPath(new URL('../../bench/results/', import.meta.url))
fs.mkdirSync(resultsDir, { recursive: true })
const file = path.join(resultsDir, `baselines-${report.at.replace(/[:.]/g, '-')}.json`)
fs.writeFileSync(file, JSON.stringify(report, null, 2) + '\n')
console.log(`\nwrote ${file}`)
