/*
 * Long work written once, as steps: a generator that pauses (`yield`) after
 * each slice of work of a few milliseconds. The type lives here, at the
 * bottom of what the layers above the engine share, so that a route can
 * write a sliced read without naming the engine; the engine runs steps
 * (engine/steps.ts: runNow, runInTurns) and the tenant layer schedules them.
 */

/** Work in slices: each `yield` ends a slice; the return value is the result. */
export type Steps<T> = Generator<void, T, void>
