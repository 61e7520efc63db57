/*
 * The command line of every bench script that runs on its own, read by one
 * parser so that none can forget `--help` (generate.js --help once went on
 * to generate a million records, 700 MB). A script declares what it does
 * and its options, and reads its command line with `scriptArgs` before it
 * starts any work:
 *
 *   --help (-h)   prints the usage (what the script does, its options with
 *                 their defaults) and exits 0, before anything runs;
 *   an option the script does not have, a value missing or given to a
 *   flag, or a positional argument it does not take: one line saying what
 *   was wrong, `(--help lists the options)`, exit code 2.
 *
 * Values are read by util.parseArgs in strict mode: `--name value` and
 * `--name=value` alike. A value the script itself finds wrong goes to
 * `refuse`, which exits the same way. Modules that run as a script only
 * when started as one (and are imported by others) ask `isMainModule`.
 */
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'

/** An option: `value` names what it takes (`n`, `a,b`); an option without one is a flag. */
export interface OptionDoc {
  readonly value?: string
  readonly help: string
}

export interface ScriptDoc {
  /** How to run it, e.g. `node dist/bench/exports.js [options]`. */
  readonly usage: string
  /** What it does and what it writes, a few lines. */
  readonly about: string
  readonly options: Readonly<Record<string, OptionDoc>>
  /** The positional arguments it takes (`<file.cpuprofile>`: required, `[port]`: optional, after the required); none by default. */
  readonly positionals?: readonly string[]
  /** Run by another script with these arguments, not by hand (said in the usage). */
  readonly startedBy?: string
}

/** Exit code of a command line the script does not take. */
export const USAGE_EXIT_CODE = 2

export function usageText(doc: ScriptDoc): string {
  const names = Object.entries(doc.options).map(([name, option]) => [`--${name}${option.value === undefined ? '' : ` ${option.value}`}`, option.help] as const)
  const all = [...names, ['--help', 'this text'] as const]
  const width = Math.max(...all.map(([name]) => name.length)) + 2
  const lines = [`usage: ${doc.usage}`, '', doc.about.trim()]
  if (doc.startedBy !== undefined) lines.push('', `Started by ${doc.startedBy}, not by hand.`)
  lines.push('', ...all.map(([name, help]) => `  ${name.padEnd(width)}${help.replace(/\n/g, `\n  ${' '.repeat(width)}`)}`))
  lines.push('', 'Options take their value as --name value or --name=value; an unknown option is refused.')
  return lines.join('\n')
}

/** Stops the script for a command line it does not take: the reason, where the options are listed, exit code 2. */
function refuseLine(message: string): never {
  console.error(`${message}\n(--help lists the options)`)
  process.exit(USAGE_EXIT_CODE)
}

/** What a script was given, read by name. */
export class ScriptArgs {
  constructor(
    private readonly values: Readonly<Record<string, string | boolean | undefined>>,
    readonly positionals: readonly string[],
  ) {}

  /** The text of a value option, or undefined when it was not given. */
  text(name: string): string | undefined {
    const value = this.values[name]
    return typeof value === 'string' ? value : undefined
  }

  flag(name: string): boolean {
    return this.values[name] === true
  }

  /** A positive integer option; `fallback` when not given. */
  positiveInteger(name: string, fallback: number): number {
    return this.integer(name, fallback, 1)
  }

  /** An integer option of at least `min` (0: non-negative); `fallback` when not given. */
  integer(name: string, fallback: number, min: number): number {
    const text = this.text(name)
    const value = text === undefined ? fallback : Number(text)
    if (!Number.isSafeInteger(value) || value < min) this.refuse(`--${name} must be ${min === 1 ? 'a positive integer' : `an integer of at least ${min}`}, got '${text}'`)
    return value
  }

  /** Stops the script for a value it does not take (exit code 2), as for an unknown option. */
  refuse(message: string): never {
    return refuseLine(message)
  }
}

/** Reads the script's command line (see the top): --help prints the usage and exits before anything else. */
export function scriptArgs(doc: ScriptDoc, argv: readonly string[] = process.argv.slice(2)): ScriptArgs {
  const options: Record<string, { type: 'string' | 'boolean'; short?: string }> = { help: { type: 'boolean', short: 'h' } }
  for (const [name, option] of Object.entries(doc.options)) options[name] = { type: option.value === undefined ? 'boolean' : 'string' }
  // --help wins over anything else on the line, so the usage is there even for a line the script would refuse.
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(usageText(doc))
    process.exit(0)
  }
  let parsed: { values: Record<string, string | boolean | undefined>; positionals: string[] }
  try {
    parsed = parseArgs({ args: [...argv], options, strict: true, allowPositionals: true })
  } catch (error) {
    // parseArgs adds advice about '--' separators that does not apply here.
    return refuseLine((error instanceof Error ? error.message : String(error)).split('. To specify')[0] as string)
  }
  const expected = doc.positionals ?? []
  const required = expected.filter((name) => !name.startsWith('['))
  if (parsed.positionals.length > expected.length) refuseLine(`unexpected argument '${parsed.positionals[expected.length]}' (options start with --)`)
  if (parsed.positionals.length < required.length) refuseLine(`missing ${required.slice(parsed.positionals.length).join(' ')}`)
  return new ScriptArgs(parsed.values, parsed.positionals)
}

/** Whether the module at `moduleUrl` (its import.meta.url) is the script node was started with. */
export function isMainModule(moduleUrl: string): boolean {
  return process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(moduleUrl)
}
