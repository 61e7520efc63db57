/*
 * Long work written once, as steps: a generator that pauses (`yield`) after
 * each small slice of work, and is run one of two ways. `runNow` runs it to
 * the end at once (the CLI, tests, a tenant nobody else waits for);
 * `runInTurns` runs it a turn's worth at a time, so a server doing the work
 * (loading a tenant of a million records) keeps answering the other tenants
 * meanwhile (ARCHITECTURE.md §2.4). A step that needs another's result takes
 * it with `yield*`.
 *
 * A turn is as many steps as fit in TURN_BUDGET_MS, then the event loop
 * goes on (setImmediate). So the longest a turn holds the loop is the budget
 * plus one step, whatever a step costs on this machine: steps are written
 * small (a millisecond or so: a chunk of 4,096 rows, a megabyte of a file, a
 * hundred log entries) and the budget, not their count, decides how many
 * run together (one step per turn made a million-record activation hold the
 * loop for tens of milliseconds a step, and the turns' overhead made
 * smaller steps costly).
 */

import type { Steps } from '../domain/steps.js'

/** The type is the domain's (domain/steps.ts), so that a route writes steps without naming the engine. */
export type { Steps }

/** How long one turn of `runInTurns` runs steps before it lets the event loop go on. */
const TURN_BUDGET_MS = 4

export function runNow<T>(steps: Steps<T>): T {
  for (;;) {
    const next = steps.next()
    if (next.done === true) return next.value
  }
}

/** Runs `steps` TURN_BUDGET_MS (`budgetMs`) at a time, the event loop going on between two turns. */
export async function runInTurns<T>(steps: Steps<T>, budgetMs = TURN_BUDGET_MS): Promise<T> {
  for (;;) {
    const turnEnds = performance.now() + budgetMs
    do {
      const next = steps.next()
      if (next.done === true) return next.value
    } while (performance.now() < turnEnds)
    await new Promise((resolve) => setImmediate(resolve))
  }
}
