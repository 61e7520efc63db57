/*
 * A write too long for one event-loop turn — an import of many thousand
 * rows — written as steps (engine/steps.ts: the operation pauses every few
 * hundred rows) and decided a slice at a time: the steps run until a slice
 * (READ_SLICE_MS) is used up, then give the event loop a turn, so the other
 * tenants' requests go on between the slices (ARCHITECTURE.md §2.4).
 *
 * A step that throws rolls back what the write applied, also a slice at a
 * time (ROLLBACK_STEP_OPS operations between two looks at the clock): the
 * undo of a hundred thousand new records takes seconds, which the other
 * tenants must not wait for either. The error leaves once the state is as
 * before the write.
 *
 * The caller holds the tenant across the slices (the actor's exclusive
 * hold, or a batch's), so the write sees one state and its own changes
 * only, and nobody sees it half applied or half undone; the whole write is
 * one WriteTx, logged as ONE entry once its last step is decided
 * (TenantActor.writeInSlices, BatchAccess.writeInSlices).
 */
import type { Steps } from '../engine/steps.js'
import type { WriteTx } from '../engine/writeTx.js'

/** Operations undone between two looks at the clock. */
export const ROLLBACK_STEP_OPS = 256

const nextTurn = () => new Promise((resolve) => setImmediate(resolve))

/**
 * Runs the steps on `tx` to their end, yielding the event loop after each slice of `sliceMs`; their result. When a
 * step throws, `tx` is rolled back to `savepoint` in slices as well, and the error thrown on.
 */
export async function decideInSlices<T>(tx: WriteTx, savepoint: number, steps: Steps<T>, sliceMs: number): Promise<T> {
  let sliceStart = performance.now()
  try {
    for (;;) {
      const next = steps.next()
      if (next.done === true) return next.value
      if (performance.now() - sliceStart >= sliceMs) {
        await nextTurn()
        sliceStart = performance.now()
      }
    }
  } catch (error) {
    sliceStart = performance.now()
    while (tx.savepoint() > savepoint) {
      tx.rollbackTo(Math.max(savepoint, tx.savepoint() - ROLLBACK_STEP_OPS))
      if (performance.now() - sliceStart >= sliceMs) {
        await nextTurn()
        sliceStart = performance.now()
      }
    }
    throw error
  }
}
