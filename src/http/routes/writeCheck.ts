/*
 * What a write check is to a route (a resource declares its own,
 * domain/writeCheck.ts; resourceWriteChecks.ts hands it what it needs): a
 * check of the values a generic write read, before the write, and of the
 * record it stores, inside the write.
 */
import type { Rec } from '../../domain/schema.js'
import type { Call } from '../call.js'

/** A check of what a generic write stores that needs more than the declaration (resources.ts runs it). */
export interface WriteCheck {
  /** Before the write, on the values read from the request (it may wait: a DNS lookup). */
  values(call: Call, values: Record<string, unknown>): Promise<void>
  /** Inside the write, on the record as stored (a throw rolls the write back). */
  record(call: Call, rec: Rec): void
}
