/*
 * Long work written once, as steps: a generator that pauses (`yield`) after
 * each slice of work of a few milliseconds, and is run one of two ways.
 * `runNow` runs it to the end at once (the CLI, tests, a tenant nobody
 * else waits for); `runInTurns` runs one slice per event-loop turn, so a
 * server doing the work (loading a tenant of a million records) keeps
 * answering the other tenants meanwhile (ARCHITECTURE.md §2.4). A step that needs
 * another's result takes it with `yield*`.
 */

import type { Steps } from '../domain/steps.js'

/** The type is the domain's (domain/steps.ts), so that a route writes steps without naming the engine. */
export type { Steps }

export function runNow<T>(steps: Steps<T>): T {
  for (;;) {
    const next = steps.next()
    if (next.done === true) return next.value
  }
}

export async function runInTurns<T>(steps: Steps<T>): Promise<T> {
  for (;;) {
    const next = steps.next()
    if (next.done === true) return next.value
    await new Promise((resolve) => setImmediate(resolve))
  }
}
