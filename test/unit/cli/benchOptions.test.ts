/*
 * The benchmark runner's command line (bench/run.ts, bench/portRange.ts):
 * `--help` explains every option, unknown options are refused with exit
 * code 2, and `--ports` gives each server of the run the next free port of
 * a range, skipping ports something else listens on.
 */
import { execFile } from 'node:child_process'
import net from 'node:net'
import path from 'node:path'
import t from 'tap'
import { parsePortRange, PortPicker } from '../../../bench/portRange.js'
import { REPO_ROOT } from '../../helpers/server.js'

const RUNNER = path.join(REPO_ROOT, 'dist', 'bench', 'run.js')

function runBench(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [RUNNER, ...args], { timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, stdout, stderr })
    })
  })
}

t.test('--help and unknown options', async (t) => {
  const help = await runBench(['--help'])
  t.equal(help.code, 0)
  for (const option of ['--scenario', '--duration', '--connections', '--records', '--tool', '--warmup', '--skip', '--ports', '--profile', '--auto-snapshots', '--help']) {
    t.match(help.stdout, new RegExp(`^  ${option}\\b`, 'm'), `explains ${option}`)
  }
  const unknown = await runBench(['--port', '9100'])
  t.equal(unknown.code, 2, 'an unknown option exits with 2 before anything runs')
  t.match(unknown.stderr, /Unknown option '--port'/)
  t.match(unknown.stderr, /--help lists the options/)
  const badRange = await runBench(['--ports=9200-9100'])
  t.equal(badRange.code, 2)
  t.match(badRange.stderr, /--ports takes a range such as 9100-9199/)
})

t.test('port ranges', async (t) => {
  t.same(parsePortRange('9100-9199'), { first: 9100, last: 9199 })
  t.same(parsePortRange('9100'), { first: 9100, last: 9100 }, 'one port')
  for (const text of ['9199-9100', '0-10', '9100-70000', 'a-b', '9100:9199', '']) t.throws(() => parsePortRange(text), /--ports takes a range/, `'${text}'`)
})

t.test('the next free port of a range', async (t) => {
  const blocker = net.createServer()
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve))
  const taken = (blocker.address() as net.AddressInfo).port
  t.teardown(() => new Promise<void>((resolve) => blocker.close(() => resolve())))
  // A range of three ports starting at the one taken; the two after it must be free for the test to say anything.
  const free = await Promise.all(
    [taken + 1, taken + 2].map(
      (port) =>
        new Promise<boolean>((resolve) => {
          const probe = net.createServer()
          probe.once('error', () => resolve(false))
          probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)))
        }),
    ),
  )
  if (free.includes(false)) {
    t.pass(`ports ${taken + 1}-${taken + 2} are in use by something else: nothing to check`)
    return
  }
  const picker = new PortPicker({ first: taken, last: taken + 2 })
  const first = await picker.next()
  t.not(first, taken, 'a port something listens on is skipped')
  t.ok(first > taken && first <= taken + 2, `${first} is in the range`)
  const second = await picker.next()
  t.not(second, first, 'the next call goes on from there')
  t.ok(second > taken && second <= taken + 2, `${second} is in the range`)
  t.equal(await picker.next(), first, 'and wraps around')
  const full = new PortPicker({ first: taken, last: taken })
  await t.rejects(full.next(), /no free port in/, 'a range with no free port')
  t.type(await new PortPicker(null).next(), 'number', 'without a range: any free port')
})
