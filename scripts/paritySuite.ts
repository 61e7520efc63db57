/*
 * `npm run test:cluster`: finds the test files that declare themselves
 * members of the cluster parity suite (test/helpers/paritySuite.ts: a call
 * of `inClusterParitySuite()` alone on a line at a file's top level, read
 * from the text, the file not run) and runs them with tap and
 * TIMELEDGER_TEST_CLUSTER=1. `--list` prints the list instead. A suite
 * found empty is an error: tap given no file would run every test.
 */
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

/** The repository's root, whether this runs compiled (dist/scripts/) or from its source. */
const HERE = path.dirname(fileURLToPath(import.meta.url))
const ROOT = path.basename(path.dirname(HERE)) === 'dist' ? path.resolve(HERE, '..', '..') : path.resolve(HERE, '..')

/** The declaration: the call at the start of a line (so not in a comment, a string or a function) and nothing after it. */
const DECLARATION = /^inClusterParitySuite\(\)\s*$/m

/** How long one file of the suite may run (a cluster starts two nodes and PostgreSQL per file). */
const FILE_TIMEOUT_S = 900

function testFiles(dir: string, into: string[]): string[] {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) testFiles(full, into)
    else if (entry.name.endsWith('.test.ts')) into.push(full)
  }
  return into
}

/** The test files under `root`/test that declare themselves members, relative to `root`, sorted. */
export function paritySuiteFiles(root: string): string[] {
  return testFiles(path.join(root, 'test'), [])
    .filter((file) => DECLARATION.test(fs.readFileSync(file, 'utf8')))
    .map((file) => path.relative(root, file).split(path.sep).join('/'))
    .sort()
}

function main(): void {
  const files = paritySuiteFiles(ROOT)
  if (files.length === 0) {
    console.error('no test file declares itself in the cluster parity suite (inClusterParitySuite())')
    process.exit(1)
  }
  if (process.argv.includes('--list')) {
    for (const file of files) console.log(file)
    return
  }
  const tap = path.join(ROOT, 'node_modules', '.bin', 'tap')
  const run = spawnSync(tap, [`--timeout=${FILE_TIMEOUT_S}`, ...files], { cwd: ROOT, stdio: 'inherit', env: { ...process.env, TIMELEDGER_TEST_CLUSTER: '1' } })
  process.exit(run.status ?? 1)
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) main()
