/*
 * The answers kept for Idempotency-Keys (resources/keptAnswer.ts): found
 * for a user's key, and kept in the write they answer. A key is the user's:
 * the record's id is a deterministic id of the user and the key, so two
 * users' equal keys never meet and a lookup is one get by id.
 *
 * A kept answer counts for `lifetimeMs` after it was kept; past it, the key
 * is free again (the next request with it is a new request, and its answer
 * replaces the old one). The kept answers of a tenant are bounded
 * (`perTenant`): a write that keeps one more than that removes, in the same
 * write, every expired one and then the oldest, down to nine tenths of the
 * bound, so the scan that finds them runs once per tenth of the bound and
 * not on every write.
 */
import { deterministicId } from '../hashId.js'
import { putKeyedRecord } from '../recordMaking.js'
import { KeptAnswer } from '../resources/keptAnswer.js'
import type { Rec } from '../schema.js'
import type { StateView, Tx } from '../tx.js'

/** What a sweep leaves of the bound: nine tenths (see the top). */
const SWEPT_TO_SHARE = 0.9

/** An answer as kept: the status, the body and the headers that matter. */
export interface Answer {
  readonly status: number
  readonly contentType: string | null
  readonly location: string | null
  readonly etag: string | null
  readonly body: string
}

export interface KeptAnswerLimits {
  /** How long a kept answer counts (IDEMPOTENCY_KEY_LIFETIME_MS). */
  readonly lifetimeMs: number
  /** Most kept answers of a tenant (IDEMPOTENCY_KEYS_PER_TENANT). */
  readonly perTenant: number
}

function keptAnswerId(userId: string, key: string): string {
  return deterministicId(KeptAnswer.type, userId, key)
}

function expired(rec: Rec, nowMs: number, lifetimeMs: number): boolean {
  return (rec.createdAt as number) + lifetimeMs <= nowMs
}

/** The answer kept for the user's key and the fingerprint of its request; null when there is none or it expired. */
export function keptAnswerOf(state: StateView, userId: string, key: string, nowMs: number, lifetimeMs: number): (Answer & { fingerprint: string }) | null {
  const rec = state.get(KeptAnswer.type, keptAnswerId(userId, key))
  if (rec === undefined || expired(rec, nowMs, lifetimeMs)) return null
  const text = (value: unknown): string | null => (typeof value === 'string' ? value : null)
  return {
    fingerprint: rec.fingerprint as string,
    status: rec.status as number,
    contentType: text(rec.contentType),
    location: text(rec.location),
    etag: text(rec.etag),
    body: rec.body as string,
  }
}

/** Keeps the answer of the user's request with `key` in the write `tx` (replacing an expired one), within the bound. */
export function keepAnswer(tx: Tx, userId: string, key: string, fingerprint: string, answer: Answer, limits: KeptAnswerLimits): void {
  const id = keptAnswerId(userId, key)
  putKeyedRecord(tx, KeptAnswer, id, { fingerprint, ...answer })
  if (tx.state.collection(KeptAnswer.type).size > limits.perTenant) sweep(tx, id, limits)
}

/** Removes the expired kept answers, then the oldest, until nine tenths of the bound remain; never `keptId`. */
function sweep(tx: Tx, keptId: string, limits: KeptAnswerLimits): void {
  const kept = tx.state.collection(KeptAnswer.type)
  const keep = Math.floor(limits.perTenant * SWEPT_TO_SHARE)
  const candidates = [...kept.values()].filter((rec) => rec.id !== keptId)
  candidates.sort((a, b) => (a.createdAt as number) - (b.createdAt as number))
  let excess = kept.size - Math.max(1, keep)
  for (const rec of candidates) {
    if (excess <= 0 && !expired(rec, tx.now, limits.lifetimeMs)) break
    tx.del(KeptAnswer.type, rec.id)
    excess -= 1
  }
}
