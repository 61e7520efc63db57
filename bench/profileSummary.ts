/*
 * Reads a V8 .cpuprofile (from `node --cpu-prof`) and prints where the time
 * went: the functions with the most self time, and the most inclusive time
 * (self + callees, each function counted once per stack). Sample counts
 * are turned into milliseconds with the profile's own time span.
 *
 *   node dist/bench/profileSummary.js <file.cpuprofile> [--top 25] [--match text]
 *
 * `--match` keeps only functions whose name or file contains the text.
 */
import fs from 'node:fs'
import path from 'node:path'
import { isMainModule, scriptArgs } from './cliOptions.js'

interface ProfileNode {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number }
  children?: number[]
}

interface CpuProfile {
  nodes: ProfileNode[]
  startTime: number
  endTime: number
  samples: number[]
}

export interface FunctionTime {
  name: string
  selfMs: number
  totalMs: number
}

function frameName(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame
  const file = url === '' ? '' : ` ${path.basename(url)}:${lineNumber + 1}`
  return `${functionName || '(anonymous)'}${file}`
}

export function summarizeProfile(profile: CpuProfile): { totalMs: number; functions: FunctionTime[] } {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const parent = new Map<number, number>()
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id)
  const msPerSample = (profile.endTime - profile.startTime) / 1000 / Math.max(1, profile.samples.length)
  const self = new Map<string, number>()
  const total = new Map<string, number>()
  for (const sample of profile.samples) {
    const leaf = byId.get(sample)
    if (leaf === undefined) continue
    self.set(frameName(leaf), (self.get(frameName(leaf)) ?? 0) + 1)
    const seen = new Set<string>()
    for (let id: number | undefined = sample; id !== undefined; id = parent.get(id)) {
      const node = byId.get(id)
      if (node === undefined) break
      const name = frameName(node)
      if (seen.has(name)) continue
      seen.add(name)
      total.set(name, (total.get(name) ?? 0) + 1)
    }
  }
  const functions = [...total].map(([name, samples]) => ({ name, selfMs: (self.get(name) ?? 0) * msPerSample, totalMs: samples * msPerSample }))
  return { totalMs: profile.samples.length * msPerSample, functions }
}

function printTop(title: string, rows: FunctionTime[], key: 'selfMs' | 'totalMs', top: number, totalMs: number): void {
  console.log(`\n${title}`)
  for (const row of [...rows].sort((a, b) => b[key] - a[key]).slice(0, top)) {
    console.log(`${row[key].toFixed(0).padStart(8)} ms ${((100 * row[key]) / totalMs).toFixed(1).padStart(5)}%  ${row.name}`)
  }
}

if (isMainModule(import.meta.url)) {
  const args = scriptArgs({
    usage: 'node dist/bench/profileSummary.js <file.cpuprofile> [options]',
    about: 'The functions of a CPU profile by self and by inclusive time.',
    options: {
      top: { value: 'n', help: 'how many functions each list shows (default 25)' },
      match: { value: 'text', help: 'only functions whose name holds this text' },
    },
    positionals: ['<file.cpuprofile>'],
  })
  const file = args.positionals[0] as string
  const top = args.positiveInteger('top', 25)
  const match = args.text('match') ?? ''
  const { totalMs, functions } = summarizeProfile(JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile)
  const shown = functions.filter((row) => row.name.includes(match))
  console.log(`${file}: ${totalMs.toFixed(0)} ms sampled`)
  printTop('self time', shown, 'selfMs', top, totalMs)
  printTop('inclusive time', shown, 'totalMs', top, totalMs)
}
