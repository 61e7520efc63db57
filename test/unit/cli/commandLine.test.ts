/*
 * The operator CLI's command lines (commandLine.ts, cli.ts): util.parseArgs
 * in strict mode, `--opt value` and `--opt=value` alike, unknown options,
 * missing values and extra arguments refused with a message naming the
 * command's options and exit code 2, `--help` for every command; and the
 * compiled CLI run as an operator runs it.
 */
import t from 'tap'
import { parseCommandLine, UsageError } from '../../../src/commandLine.js'
import { runCli } from '../../helpers/cli.js'
import { tempDataDir } from '../../helpers/server.js'

const RESTORE = { from: 'value', as: 'value', 'to-seq': 'value', 'to-time': 'value' } as const

t.test('--opt value and --opt=value', async (t) => {
  const spaced = parseCommandLine('restore', ['acme', '--to-seq', '12'], RESTORE, 1)
  const joined = parseCommandLine('restore', ['--to-seq=12', 'acme'], RESTORE, 1)
  for (const line of [spaced, joined]) {
    t.equal(line.text('to-seq'), '12')
    t.same(line.positionals, ['acme'])
    t.equal(line.text('from'), undefined, 'an option not given')
    t.equal(line.help, false)
  }
  t.equal(parseCommandLine('export', ['acme', '--out=a=b.tlexport'], { out: 'value' }, 1).text('out'), 'a=b.tlexport', 'only the first = splits')
  t.equal(parseCommandLine('x', ['--out', '-'], { out: 'value' }, 0).text('out'), '-', 'a lone dash is a value')
  const snapshot = parseCommandLine('snapshot', ['--all'], { all: 'flag' }, 1)
  t.equal(snapshot.flag('all'), true)
  t.equal(parseCommandLine('snapshot', ['acme'], { all: 'flag' }, 1).flag('all'), false)
  t.equal(parseCommandLine('x', ['--', '--literal'], {}, 1).positionals[0], '--literal', 'after --: positional')
})

t.test('refused lines', async (t) => {
  t.throws(() => parseCommandLine('export', ['acme', '--output', 'f'], { out: 'value' }, 1), new UsageError("unknown option '--output' for 'export'; its options: --out <value>"))
  t.throws(() => parseCommandLine('serve', ['--port=9000'], {}, 0), new UsageError("unknown option '--port' for 'serve'; it takes no options"))
  t.throws(() => parseCommandLine('serve', ['-p'], {}, 0), { message: /unknown option '-p'/ }, 'an unknown short option')
  t.throws(() => parseCommandLine('export', ['acme', '--out'], { out: 'value' }, 1), { name: 'Error', message: /^export: option '--out <value>' argument missing/ }, 'a value option at the end')
  t.throws(() => parseCommandLine('snapshot', ['--all=yes'], { all: 'flag' }, 1), { message: /'--all' does not take an argument/ }, 'a value on a flag')
  t.throws(() => parseCommandLine('history', ['acme', 'beta'], {}, 1), new UsageError("unexpected argument 'beta' for 'history'"))
  t.throws(() => parseCommandLine('tenants', ['acme'], {}, 0), new UsageError("'tenants' takes no arguments, got 'acme'"))
  for (const args of [['--output', 'f'], ['--out'], ['a', 'b']]) {
    try {
      parseCommandLine('export', args, { out: 'value' }, 1)
      t.fail(`${args.join(' ')} was taken`)
    } catch (error) {
      t.type(error, UsageError, `${args.join(' ')}: a UsageError`)
    }
  }
})

t.test('--help', async (t) => {
  t.equal(parseCommandLine('export', ['--help'], { out: 'value' }, 1).help, true)
  t.equal(parseCommandLine('export', ['-h'], { out: 'value' }, 1).help, true)
  t.equal(parseCommandLine('tenants', ['--help', 'extra'], {}, 0).help, true, 'help is not refused for an extra argument')
})

t.test('the compiled CLI', async (t) => {
  const dataDir = tempDataDir('cli-options')
  const unknown = await runCli(dataDir, ['export', 'acme', '--output', 'file'])
  t.equal(unknown.code, 2, 'an unknown option exits with 2')
  t.match(unknown.stderr, /unknown option '--output' for 'export'; its options: --out <value>/)
  t.match(unknown.stderr, /usage: timeledger export <tenant> --out <file>/, 'with the usage')

  const serve = await runCli(dataDir, ['serve', '--port', '9000'])
  t.equal(serve.code, 2, 'serve takes no options: exit 2, no server started')
  t.match(serve.stderr, /unknown option '--port' for 'serve'/)
  t.match(serve.stderr, /PORT/, 'the usage names the environment')

  const missing = await runCli(dataDir, ['history'])
  t.equal(missing.code, 2, 'a missing argument exits with 2')
  t.match(missing.stderr, /history needs <tenant>/)

  const joined = await runCli(dataDir, ['haproxy-config', '--nodes=127.0.0.1:9001,127.0.0.1:9002', '--bind=127.0.0.1:9000'])
  t.equal(joined.code, 0, joined.stderr)
  t.match(joined.stdout, /127\.0\.0\.1:9001/, '--nodes=… read')
  t.match(joined.stdout, /bind 127\.0\.0\.1:9000/, '--bind=… read')

  const badValue = await runCli(dataDir, ['restore', 'acme', '--to-seq=abc'])
  t.equal(badValue.code, 1, 'a value the command refuses is a failure of the command (1)')
  t.match(badValue.stderr, /--to-seq needs a sequence number of 1 or more, got 'abc'/)

  const help = await runCli(dataDir, ['restore', '--help'])
  t.equal(help.code, 0)
  t.match(help.stdout, /usage: timeledger restore <tenant>/)

  const command = await runCli(dataDir, ['no-such-command'])
  t.equal(command.code, 2, 'an unknown command exits with 2')
})
