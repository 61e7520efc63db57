/*
 * The `--name value` options of the bench scripts that run on their own
 * (engineFigures, aggregateCost, profileScenario, latencySplit, loginCost). The runner
 * (run.ts) checks its options as a whole and keeps its own parser.
 */

/** The value after `--name`, or undefined when the option is not given. */
export function textOption(argv: readonly string[], name: string): string | undefined {
  const index = argv.indexOf(`--${name}`)
  return index < 0 ? undefined : argv[index + 1]
}

/** A positive integer option; `fallback` when not given. */
export function positiveIntegerOption(argv: readonly string[], name: string, fallback: number): number {
  const text = textOption(argv, name)
  const value = text === undefined ? fallback : Number(text)
  if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`--${name} must be a positive integer`)
  return value
}
