/*
 * The guard's command line (bench/guard.ts, `npm run bench:guard`):
 * `--help` explains every option and starts nothing, a bad option or ref
 * exits 2 before anything is built, and no worktree is left behind.
 */
import { execFile, execFileSync } from 'node:child_process'
import path from 'node:path'
import t from 'tap'
import { REPO_ROOT } from '../../helpers/server.js'

const GUARD = path.join(REPO_ROOT, 'dist', 'bench', 'guard.js')

function runGuard(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [GUARD, ...args], { timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, stdout, stderr })
    })
  })
}

const worktrees = () =>
  execFileSync('git', ['worktree', 'list', '--porcelain'], { cwd: REPO_ROOT, encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.includes('timeledger-guard-'))

t.test('--help explains every option and starts nothing', async (t) => {
  const before = worktrees()
  const help = await runGuard(['--help'])
  t.equal(help.code, 0)
  for (const option of ['--against', '--rounds', '--duration', '--scenario', '--records', '--connections', '--warmup', '--help']) {
    t.match(help.stdout, new RegExp(`^  ${option}\\b`, 'm'), `explains ${option}`)
  }
  t.match(help.stdout, /Exit code 0: no scenario SLOWER; 1: at least one; 2: the run could not judge/)
  t.equal(help.stderr, '', 'no progress: nothing ran')
  t.same(worktrees(), before, 'no worktree made')
})

t.test('bad options and refs exit 2 before anything is built', async (t) => {
  const before = worktrees()
  const cases: [string[], RegExp][] = [
    [[], /--against <git ref> is required/],
    [['--against', 'main', '--bogus'], /Unknown option '--bogus'/],
    [['--against', 'main', '--rounds', '0'], /--rounds must be an integer of at least 1/],
    [['--against', 'main', '--duration', '0.1'], /--duration must be a number of at least 0.2/],
    [['--against', 'main', '--scenario', 'self,nope'], /unknown scenario 'nope'/],
    [['--against', 'no-such-ref-anywhere'], /'no-such-ref-anywhere' names no commit of this repository/],
  ]
  for (const [args, message] of cases) {
    const run = await runGuard(args)
    t.equal(run.code, 2, `${args.join(' ') || '(no options)'}: exit 2`)
    t.match(run.stderr, message)
  }
  t.same(worktrees(), before, 'no worktree left behind')
})
