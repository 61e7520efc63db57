/*
 * `npm test` on any machine (scripts/runTests.ts, test/helpers/systemPrograms.ts):
 *  - every stage runs and is reported, a failing first stage included, and
 *    the run fails when any stage failed (it was `tap && …`: a failing tap
 *    stage kept the cluster stage from running, silently);
 *  - a stage or a test file that needs a Debian package that is missing is
 *    skipped with one line naming the package, and fails instead with CI set.
 *    The packages are hidden with TIMELEDGER_TEST_MISSING, which the helper
 *    honours, so this runs on a machine that has them all.
 */
import { execFile } from 'node:child_process'
import path from 'node:path'
import t from 'tap'
import { exitCodeOf, runStages, STAGES, summaryLines, type Stage } from '../../../scripts/runTests.js'
import { REPO_ROOT } from '../../helpers/server.js'
import { inCI, installed, missingLine, missingPackages, PRETEND_MISSING_ENV } from '../../helpers/systemPrograms.js'

const node = (code: string): string[] => [process.execPath, '-e', code]

/** The environment without the variables this test process's tap runner set (a child test file then runs on its own). */
function plainEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [name, value] of Object.entries(process.env)) if (!name.startsWith('TAP') && name !== 'CI' && name !== PRETEND_MISSING_ENV) env[name] = value
  return { ...env, ...extra }
}

/** Runs a compiled test file on its own, as tap would; answers its exit code and TAP output. */
function runTestFile(file: string, extra: Record<string, string>): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [path.join(REPO_ROOT, 'dist', file)], { env: plainEnv(extra), timeout: 120_000 }, (error, stdout) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, stdout })
    })
  })
}

/** Sets TIMELEDGER_TEST_MISSING for the duration of `run`. */
async function pretendMissing<T>(names: string, run: () => Promise<T> | T): Promise<T> {
  const before = process.env[PRETEND_MISSING_ENV]
  process.env[PRETEND_MISSING_ENV] = names
  try {
    return await run()
  } finally {
    if (before === undefined) delete process.env[PRETEND_MISSING_ENV]
    else process.env[PRETEND_MISSING_ENV] = before
  }
}

t.test('every stage runs, a failing one too; each is reported; the run fails when one failed', async (t) => {
  const said: string[] = []
  const stages: Stage[] = [
    { name: 'first', about: 'fails', command: node('process.exit(3)'), needs: [] },
    { name: 'second', about: 'passes', command: node('require("node:fs").writeFileSync(process.env.MARK, "ran")'), needs: [] },
  ]
  const mark = path.join(t.testdir(), 'second-ran')
  const outcomes = await runStages(stages, { say: (line) => said.push(line), ci: false, cwd: REPO_ROOT, env: { ...process.env, MARK: mark } })
  t.same(
    outcomes.map(({ name, result }) => [name, result]),
    [
      ['first', 'failed'],
      ['second', 'passed'],
    ],
    'the second stage ran after the first failed',
  )
  t.match(said.join('\n'), /== stage 1 of 2: first — fails/)
  t.match(said.join('\n'), /== stage 2 of 2: second — passes/)
  const summary = summaryLines(outcomes)
  t.equal(summary[0], '== summary')
  t.match(summary[1], /^first {3}FAILED {3}exit code 3, after \d+s$/)
  t.match(summary[2], /^second {2}passed {3}in \d+s$/)
  t.equal(summary[3], 'npm test: FAILED (1 of 2 stages failed)')
  t.equal(exitCodeOf(outcomes), 1)
  t.equal(
    exitCodeOf([
      { name: 'a', result: 'passed', durationMs: 1 },
      { name: 'b', result: 'skipped', why: 'x' },
    ]),
    0,
    'a skipped stage fails nothing',
  )
})

t.test('the cluster stage: skipped without postgresql and haproxy, failed with CI set', async (t) => {
  const cluster = STAGES.find(({ name }) => name === 'cluster') as Stage
  t.same(cluster.needs, ['postgresql', 'haproxy'])
  const never: Stage = { ...cluster, command: node('process.exit(9)') }
  for (const ci of [false, true]) {
    const said: string[] = []
    const outcomes = await pretendMissing('postgresql,haproxy', () => runStages([never], { say: (line) => said.push(line), ci, cwd: REPO_ROOT, env: process.env }))
    const line = 'needs the Debian packages postgresql and haproxy, which are not installed here (apt-get install postgresql haproxy)'
    t.equal(said.join('\n').split('\n')[1], ci ? `${line}; CI is set, so the stage fails` : `skipped: ${line}`, `CI ${ci ? 'set' : 'unset'}: one line naming the packages`)
    t.equal(outcomes[0]?.result, ci ? 'failed' : 'skipped')
    t.equal(exitCodeOf(outcomes), ci ? 1 : 0)
    t.match(summaryLines(outcomes)[1] ?? '', ci ? /^cluster {2}FAILED {3}needs the Debian packages postgresql and haproxy/ : /^cluster {2}skipped {2}needs the Debian packages/)
  }
})

t.test('the helper: which packages are missing, one line for them, skip or fail', async (t) => {
  await pretendMissing('haproxy', () => t.ok(missingPackages(['postgresql', 'haproxy']).includes('haproxy'), 'TIMELEDGER_TEST_MISSING hides a package'))
  await pretendMissing('haproxi', () => t.throws(() => missingPackages(['haproxy']), /TIMELEDGER_TEST_MISSING names 'haproxi'; it takes postgresql, haproxy, chromium, curl/))
  t.equal(missingLine(['chromium']), 'needs the Debian package chromium, which is not installed here (apt-get install chromium)')
  for (const [value, expected] of [
    ['1', true],
    ['true', true],
    ['', false],
    ['0', false],
    ['false', false],
  ] as const)
    t.equal(inCI({ CI: value }), expected, `CI='${value}'`)
  t.equal(inCI({}), false)

  const ciBefore = process.env.CI
  t.teardown(() => {
    if (ciBefore === undefined) delete process.env.CI
    else process.env.CI = ciBefore
  })
  for (const ci of ['', '1']) {
    process.env.CI = ci
    const calls: string[] = []
    const fakeRoot = { plan: (count: number, comment?: string) => calls.push(`plan ${count} ${comment}`), fail: (message: string) => calls.push(`fail ${message}`) }
    t.equal(await pretendMissing('curl', () => installed(fakeRoot, ['curl'])), false, 'a missing package: the file registers nothing more')
    const line = 'needs the Debian package curl, which is not installed here (apt-get install curl)'
    t.same(calls, [ci === '' ? `plan 0 skipped: ${line}` : `fail ${line}; CI is set, so this fails instead of skipping`], ci === '' ? 'skipped with one line' : 'CI set: failed')
  }
})

t.test('a test file that needs a missing package: skipped with one line, failed with CI set', async (t) => {
  for (const [file, pkg] of [
    ['test/unit/persist/pgMigrations.test.js', 'postgresql'],
    ['test/cluster/placement.test.js', 'haproxy'],
    ['test/browser/docs.test.js', 'chromium'],
  ] as const) {
    const skipped = await runTestFile(file, { [PRETEND_MISSING_ENV]: pkg })
    t.equal(skipped.code, 0, `${file} without ${pkg}: passes (skipped)`)
    t.match(skipped.stdout, new RegExp(`^1\\.\\.0 # skipped: needs the Debian package ${pkg}, which is not installed here \\(apt-get install ${pkg}\\)$`, 'm'), 'one line naming the package')
    t.notMatch(skipped.stdout, /^(not )?ok /m, 'no test ran')
    const failed = await runTestFile(file, { [PRETEND_MISSING_ENV]: pkg, CI: '1' })
    t.not(failed.code, 0, `${file} without ${pkg}, CI set: fails`)
    t.match(failed.stdout, new RegExp(`not ok 1 - needs the Debian package ${pkg}, which is not installed here \\(apt-get install ${pkg}\\); CI is set, so this fails instead of skipping`))
  }
})
