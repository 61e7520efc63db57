/*
 * A write too long for one event-loop turn — an import of many thousand
 * rows — written as steps (engine/steps.ts: the operation pauses every few
 * hundred rows) and decided a slice at a time: the steps run until a slice
 * (READ_SLICE_MS) is used up, then give the event loop a turn, so the other
 * tenants' requests go on between the slices (design §2.4).
 *
 * The caller holds the tenant across the slices (the actor's exclusive
 * hold, or a batch's), so the write sees one state and its own changes
 * only; the whole write is one WriteTx, logged as ONE entry once its last
 * step is decided, or rolled back whole when a step throws
 * (TenantActor.writeInSlices, BatchAccess.writeInSlices).
 */
import type { Steps } from '../engine/steps.js'

/** Runs the steps to their end, yielding the event loop after each slice of `sliceMs`; their result. */
export async function decideInSlices<T>(steps: Steps<T>, sliceMs: number): Promise<T> {
  let sliceStart = performance.now()
  for (;;) {
    const next = steps.next()
    if (next.done === true) return next.value
    if (performance.now() - sliceStart >= sliceMs) {
      await new Promise((resolve) => setImmediate(resolve))
      sliceStart = performance.now()
    }
  }
}
