/*
 * `npm test`: every stage of the test suite runs, each is reported, and the
 * run fails when any stage failed. (It was `tap && npm run test:cluster`:
 * when tap failed, the cluster stage silently did not run.)
 *
 *   1. lint     the project checks itself (npm run lint): Biome's format
 *               and lint rules (biome.jsonc), the layers of src/README.md as
 *               dependency-cruiser rules, every
 *               file a comment names exists, and knip finds no unused
 *               file, export or dependency;
 *   2. tap      every test file (unit, HTTP, crash, browser, cluster):
 *               tap with the configuration in package.json;
 *   3. cluster  the HTTP suites of the parity suite again (the files that
 *               declare themselves: scripts/paritySuite.ts), each server
 *               they start being a two-node cluster behind HAProxy, and
 *               the short form of the randomized fault test
 *               (test/cluster/nemesis.test.ts, which the tap stage leaves
 *               out: package.json's tap.exclude) (npm run test:cluster).
 *
 * Each stage's own output goes through as it comes; a line announces the
 * stage, and at the end one summary line per stage says passed, FAILED
 * (with the exit code or signal) or skipped, and how long it took. The
 * cluster stage needs Debian's postgresql and haproxy: without them it is
 * skipped with one line naming the packages, or, with CI set, failed
 * (test/helpers/systemPrograms.ts decides, as for the test files that need
 * them). Ctrl-C (or SIGTERM) stops the stage that runs and no later one
 * starts.
 *
 * Run by `npm test` after `pretest` compiled the tree (dist/scripts/runTests.js).
 */
import { spawn } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { inCI, missingLine, missingPackages, type SystemPackage } from '../test/helpers/systemPrograms.js'

export interface Stage {
  readonly name: string
  /** What it runs, for the announcing line. */
  readonly about: string
  /** The program and its arguments. */
  readonly command: readonly string[]
  /** Packages the stage needs: without them it is skipped (failed with CI set). */
  readonly needs: readonly SystemPackage[]
}

export type StageOutcome =
  | { readonly name: string; readonly result: 'passed'; readonly durationMs: number }
  | { readonly name: string; readonly result: 'failed'; readonly durationMs: number; readonly why: string }
  | { readonly name: string; readonly result: 'skipped'; readonly why: string }

export interface RunOptions {
  /** Where the runner's own lines go. */
  readonly say: (line: string) => void
  readonly ci: boolean
  readonly cwd: string
  readonly env: NodeJS.ProcessEnv
}

/** The repository's root, whether this runs compiled (dist/scripts/) or from its source (scripts/, in tests). */
const HERE = path.dirname(fileURLToPath(import.meta.url))
const ROOT = path.basename(path.dirname(HERE)) === 'dist' ? path.resolve(HERE, '..', '..') : path.resolve(HERE, '..')

export const STAGES: readonly Stage[] = [
  { name: 'lint', about: "Biome's format and lint rules, the layers of src/README.md, the files comments name, nothing unused (knip)", command: ['npm', 'run', '--silent', 'lint'], needs: [] },
  { name: 'tap', about: 'every test file: unit, HTTP, crash, browser, cluster', command: [path.join(ROOT, 'node_modules', '.bin', 'tap')], needs: [] },
  {
    name: 'cluster',
    about: 'the HTTP suites again, through a two-node cluster behind HAProxy; the fault test, short',
    command: ['npm', 'run', '--silent', 'test:cluster'],
    needs: ['postgresql', 'haproxy'],
  },
]

function duration(ms: number): string {
  const seconds = Math.round(ms / 1000)
  return seconds < 60 ? `${seconds}s` : `${Math.floor(seconds / 60)}m ${String(seconds % 60).padStart(2, '0')}s`
}

/** Runs one stage's command with the output passed through; answers why it failed, or null. */
function runCommand(stage: Stage, options: RunOptions, running: { child: ReturnType<typeof spawn> | null }): Promise<string | null> {
  return new Promise((resolve) => {
    const [program, ...args] = stage.command as [string, ...string[]]
    const child = spawn(program, args, { cwd: options.cwd, env: options.env, stdio: 'inherit' })
    running.child = child
    child.once('error', (error) => resolve(`could not start ${program}: ${error.message}`))
    child.once('exit', (code, signal) => {
      running.child = null
      resolve(code === 0 ? null : signal !== null ? `ended by ${signal}` : `exit code ${code}`)
    })
  })
}

/** Runs every stage (none after an interruption), reports each, and answers the outcomes. */
export async function runStages(stages: readonly Stage[], options: RunOptions): Promise<StageOutcome[]> {
  const outcomes: StageOutcome[] = []
  const running: { child: ReturnType<typeof spawn> | null } = { child: null }
  let interrupted: string | null = null
  const interrupt = (signal: NodeJS.Signals) => {
    interrupted = signal
    running.child?.kill(signal)
  }
  process.on('SIGINT', interrupt)
  process.on('SIGTERM', interrupt)
  try {
    for (const [index, stage] of stages.entries()) {
      if (interrupted !== null) {
        outcomes.push({ name: stage.name, result: 'skipped', why: `not run: the run was interrupted (${interrupted})` })
        continue
      }
      const heading = `== stage ${index + 1} of ${stages.length}: ${stage.name} — ${stage.about}`
      const missing = missingPackages(stage.needs)
      if (missing.length > 0) {
        const line = missingLine(missing)
        options.say(`${heading}\n${options.ci ? `${line}; CI is set, so the stage fails` : `skipped: ${line}`}`)
        outcomes.push(options.ci ? { name: stage.name, result: 'failed', durationMs: 0, why: `${line} (CI is set)` } : { name: stage.name, result: 'skipped', why: line })
        continue
      }
      options.say(`${heading} (${stage.command.map((part) => path.basename(part)).join(' ')})`)
      const started = performance.now()
      const failure = await runCommand(stage, options, running)
      const durationMs = performance.now() - started
      outcomes.push(failure === null ? { name: stage.name, result: 'passed', durationMs } : { name: stage.name, result: 'failed', durationMs, why: failure })
    }
  } finally {
    process.off('SIGINT', interrupt)
    process.off('SIGTERM', interrupt)
  }
  return outcomes
}

/** The summary: a line per stage, then the verdict. */
export function summaryLines(outcomes: readonly StageOutcome[]): string[] {
  const width = Math.max(...outcomes.map(({ name }) => name.length))
  const lines = outcomes.map((outcome) => {
    const name = outcome.name.padEnd(width)
    if (outcome.result === 'passed') return `${name}  passed   in ${duration(outcome.durationMs)}`
    if (outcome.result === 'failed') return `${name}  FAILED   ${outcome.why}${outcome.durationMs > 0 ? `, after ${duration(outcome.durationMs)}` : ''}`
    return `${name}  skipped  ${outcome.why}`
  })
  const failed = outcomes.filter(({ result }) => result === 'failed').length
  const skipped = outcomes.filter(({ result }) => result === 'skipped').length
  const verdict = failed > 0 ? `npm test: FAILED (${failed} of ${outcomes.length} stages failed)` : `npm test: passed${skipped > 0 ? ` (${skipped} of ${outcomes.length} stages skipped)` : ''}`
  return ['== summary', ...lines, verdict]
}

/** The exit code of a run: 1 when any stage failed. */
export function exitCodeOf(outcomes: readonly StageOutcome[]): number {
  return outcomes.some(({ result }) => result === 'failed') ? 1 : 0
}

const isMain = process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)
if (isMain) {
  if (process.argv.length > 2) {
    console.error(`usage: npm test (runs every stage: ${STAGES.map(({ name }) => name).join(', ')}); one file: npx tap <file>`)
    process.exit(2)
  }
  const outcomes = await runStages(STAGES, { say: (line) => console.log(line), ci: inCI(), cwd: ROOT, env: process.env })
  console.log(summaryLines(outcomes).join('\n'))
  process.exit(exitCodeOf(outcomes))
}
