/*
 * The command line of one operator command (cli.ts), read by Node's
 * util.parseArgs in strict mode: each command declares its options (a
 * value or a flag) and how many positional arguments it takes. `--name
 * value` and `--name=value` are the same; an option the command does not
 * have, an option given without its value, a value given to a flag, or one
 * positional argument too many is a usage error whose message says what was
 * wrong and which options the command has. The CLI prints it with the
 * command's usage and exits with 2, the usual code of a usage error.
 */
import { parseArgs } from 'node:util'
import type { Config } from './config.js'

/** An option of a command: `value` takes text (`--out file`), `flag` none (`--all`). */
type OptionKind = 'value' | 'flag'

export type OptionSpecs = Readonly<Record<string, OptionKind>>

/** A command line that is not one the command takes. */
export class UsageError extends Error {}

/** What a command was given, read by name. */
export class CommandLine {
  constructor(
    private readonly values: Readonly<Record<string, string | boolean | undefined>>,
    readonly positionals: readonly string[],
    /** `--help` (or `-h`) was given. */
    readonly help: boolean,
  ) {}

  /** The text of a value option, or undefined when it was not given. */
  text(name: string): string | undefined {
    const value = this.values[name]
    return typeof value === 'string' ? value : undefined
  }

  /** Whether a flag was given. */
  flag(name: string): boolean {
    return this.values[name] === true
  }
}

function optionList(options: OptionSpecs): string {
  const names = Object.entries(options).map(([name, kind]) => (kind === 'value' ? `--${name} <value>` : `--${name}`))
  return names.length === 0 ? 'it takes no options' : `its options: ${names.join(', ')}`
}

/** The option a parseArgs error message names (`'--foo'`), for a message of our own. */
function namedOption(message: string): string {
  return /'(-[^'\s]*)/.exec(message)?.[1] ?? ''
}

/**
 * Reads `args` (what follows the command's name) against the command's options and at most `maxPositionals`
 * positional arguments; throws UsageError when they do not fit. `--help`/`-h` is every command's.
 */
export function parseCommandLine(command: string, args: readonly string[], options: OptionSpecs, maxPositionals: number): CommandLine {
  const config: Record<string, { type: 'string' | 'boolean'; short?: string }> = { help: { type: 'boolean', short: 'h' } }
  for (const [name, kind] of Object.entries(options)) config[name] = { type: kind === 'value' ? 'string' : 'boolean' }
  let parsed: { values: Record<string, string | boolean | undefined>; positionals: string[] }
  try {
    parsed = parseArgs({ args: [...args], options: config, strict: true, allowPositionals: true })
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    const message = error instanceof Error ? error.message : String(error)
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') throw new UsageError(`unknown option '${namedOption(message)}' for '${command}'; ${optionList(options)}`)
    if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') throw new UsageError(`${command}: ${message.replace(/^Option/, 'option')}`)
    throw error
  }
  const help = parsed.values.help === true
  if (!help && parsed.positionals.length > maxPositionals) {
    const extra = parsed.positionals[maxPositionals] as string
    throw new UsageError(maxPositionals === 0 ? `'${command}' takes no arguments, got '${extra}'` : `unexpected argument '${extra}' for '${command}'`)
  }
  return new CommandLine(parsed.values, parsed.positionals, help)
}

/** An operator command (cli.ts): its help, what it takes, and what it does. */
export interface Command {
  summary: string
  usage: string
  /** The options it takes (see the top); `--help` is every command's. */
  options: OptionSpecs
  /** The most positional arguments it takes. */
  positionals: number
  /** Resolves when done (exit code 0), or with the exit code of an answer that is no success (status: not running). */
  run(line: CommandLine, config: Config): Promise<number | undefined>
}
