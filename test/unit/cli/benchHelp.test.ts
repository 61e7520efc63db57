/*
 * Every script in bench/ answers --help without starting work (generate.js
 * --help once generated a million records, 700 MB): each compiled file of
 * bench/ is run with --help, in an empty working folder and with an empty
 * temporary folder (TMPDIR), and must exit 0, print its usage when it is a
 * script, and write nothing — not there, not in bench/data or
 * bench/results. A file that reads its command line must do it through the
 * one parser (bench/cliOptions.ts), so none can forget --help. The files
 * that are only imported by others print nothing and do nothing.
 */
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { REPO_ROOT } from '../../helpers/server.js'

const BENCH = path.join(REPO_ROOT, 'bench')
/** A kill limit for a script that would start work, not a measure of speed. */
const KILL_AFTER_MS = 60_000
const PARALLEL = 4

function sourcesUnder(dir: string): string[] {
  const found: string[] = []
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name)
    if (entry.isDirectory()) found.push(...sourcesUnder(file))
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) found.push(file)
  }
  return found.sort()
}

/** Every file under `dir` with its size and time, to see that nothing was written. */
function listing(dir: string): string[] {
  if (!fs.existsSync(dir)) return []
  const entries: string[] = []
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    const file = path.join(entry.parentPath, entry.name)
    const stat = fs.statSync(file)
    entries.push(`${path.relative(dir, file)} ${stat.size} ${stat.mtimeMs}`)
  }
  return entries.sort()
}

interface HelpRun {
  code: number | null
  signal: string | null
  stdout: string
  stderr: string
  wrote: string[]
}

function runHelp(script: string, scratch: string): Promise<HelpRun> {
  const cwd = fs.mkdtempSync(path.join(scratch, 'cwd-'))
  const tmp = fs.mkdtempSync(path.join(scratch, 'tmp-'))
  return new Promise((resolve) => {
    execFile(process.execPath, [script, '--help'], { cwd, env: { ...process.env, TMPDIR: tmp }, timeout: KILL_AFTER_MS, killSignal: 'SIGKILL' }, (error, stdout, stderr) => {
      const wrote = [...listing(cwd), ...listing(tmp)]
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : null, signal: error?.signal ?? null, stdout, stderr, wrote })
    })
  })
}

t.test('every bench script answers --help and starts nothing', async (t) => {
  const sources = sourcesUnder(BENCH)
  t.ok(sources.length > 30, `${sources.length} files in bench/`)
  const scratch = t.testdir()
  const before = { data: listing(path.join(BENCH, 'data')), results: listing(path.join(BENCH, 'results')) }
  const runs = new Map<string, HelpRun>()
  const queue = [...sources]
  await Promise.all(
    Array.from({ length: PARALLEL }, async () => {
      for (let source = queue.shift(); source !== undefined; source = queue.shift()) {
        const compiled = path.join(REPO_ROOT, 'dist', path.relative(REPO_ROOT, source)).replace(/\.ts$/, '.js')
        runs.set(source, await runHelp(compiled, scratch))
      }
    }),
  )
  for (const source of sources) {
    const name = path.relative(REPO_ROOT, source)
    const text = fs.readFileSync(source, 'utf8')
    const run = runs.get(source) as HelpRun
    const readsCommandLine = /process\.argv|scriptArgs\(/.test(text) && !name.endsWith('cliOptions.ts')
    t.equal(run.signal, null, `${name}: ends by itself (not killed after ${KILL_AFTER_MS / 1000} s of work)`)
    t.equal(run.code, 0, `${name} --help exits 0${run.code === 0 ? '' : `: ${run.stderr.trim().split('\n').slice(-3).join(' | ')}`}`)
    t.same(run.wrote, [], `${name} --help writes nothing`)
    if (readsCommandLine) {
      t.match(run.stdout, /^usage: /, `${name} --help prints its usage`)
      t.ok(/scriptArgs\(/.test(text), `${name} reads its command line through cliOptions.ts`)
    } else {
      t.equal(run.stdout, '', `${name} (imported by others) prints nothing`)
    }
  }
  t.same(listing(path.join(BENCH, 'data')), before.data, 'nothing written into bench/data')
  t.same(listing(path.join(BENCH, 'results')), before.results, 'nothing written into bench/results')
})

t.test('an option a script does not take stops it before any work, with exit code 2', async (t) => {
  const scratch = t.testdir()
  for (const script of ['generate.js', 'exports.js', 'cluster.js', 'profileSummary.js']) {
    const run = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      execFile(process.execPath, [path.join(REPO_ROOT, 'dist', 'bench', script), '--no-such-option'], { cwd: scratch, timeout: KILL_AFTER_MS, killSignal: 'SIGKILL' }, (error, _stdout, stderr) =>
        resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : null, stderr }),
      )
    })
    t.equal(run.code, 2, `${script}: exit code 2`)
    t.match(run.stderr, /^Unknown option '--no-such-option'\n\(--help lists the options\)\n$/, `${script}: says what was wrong`)
  }
})
