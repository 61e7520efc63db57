/*
 * Where a tenant actor is in its life, as one value (ActorLifecycle.phase).
 * Each phase carries only what is valid in it, so the state can be read
 * only where there is one, and each change of phase is one call of the
 * lifecycle's `enter` (actorLifecycle.ts), which asserts that it is one of
 * these arrows (NEXT_PHASES):
 *
 *   serving ──hibernate──> resting ──wake──> loading ──> serving
 *   loading ──its load failed──> resting
 *   resting, loading ──loadAtOnce──> serving      (operator tools, at once)
 *   serving, failed ──an append fails──> failed ──reloadedAfterFailure──> serving
 *   serving, failed, resting ──replaceState (online restore)──> serving
 *   any ──release (cluster mode)──> released     serving, released ──retire──> moved
 *
 * An idle tenant is put to rest inside an exclusive job, after its
 * snapshot; nothing loads it back behind a caller's back: its next caller
 * loads it explicitly, a request a slice per event-loop turn (a request in
 * flight that still holds the actor waits for that load), an operator tool
 * at once. A tenant this node stops serving (lease lost or given back) is
 * released and never loaded here again, since another node may write to it
 * from then on: whatever still holds the actor gets TenantMoved, and a
 * retry reaches the new owner. A tenant renamed (tenantRename.ts) leaves
 * its actor moved: anything given it later is refused as TenantRenamed.
 *
 * Whether a job holds the tenant meanwhile is the mailbox's (mailbox.ts),
 * not a phase: a serving tenant may be held by a batch, a failed one by its
 * reload; a loading one is always held by its load.
 */
import type { TenantState } from '../engine/tenantState.js'

export type TenantPhase =
  /** In memory, answering reads and writes. */
  | { readonly kind: 'serving'; readonly state: TenantState }
  /** Put to rest: the state was snapshotted and dropped; `onWake` is told when it is in memory again. */
  | { readonly kind: 'resting'; readonly onWake: () => void }
  /** A resting tenant being loaded a slice per event-loop turn (TenantActor.wake), as a job holding the tenant. */
  | { readonly kind: 'loading'; readonly onWake: () => void }
  /**
   * An append failed: nothing from `fromSeq` on is acknowledged, writes are refused (WritesUnavailable) and reads go
   * on until the tenant has reloaded what is on disk (reloadAfterFailure.ts).
   */
  | { readonly kind: 'failed'; readonly state: TenantState; readonly fromSeq: number }
  /**
   * Cluster mode: this node no longer serves the tenant (lease lost or given back) and never loads it again, since
   * another node may write to it; `failedFromSeq` keeps an append failure from before (nothing from it on is acknowledged).
   */
  | { readonly kind: 'released'; readonly failedFromSeq: number | null }
  /** Renamed (tenantRename.ts): the tenant lives under another name now; nothing more is logged under this one. */
  | { readonly kind: 'moved' }

/** The phases each phase may change to: the arrows above (ActorLifecycle asserts every change against them). */
const NEXT_PHASES: Readonly<Record<TenantPhase['kind'], readonly TenantPhase['kind'][]>> = {
  serving: ['serving', 'resting', 'failed', 'released', 'moved'],
  resting: ['loading', 'serving', 'released'],
  loading: ['serving', 'resting', 'released'],
  failed: ['serving', 'failed', 'released'],
  released: ['released', 'moved'],
  moved: ['released'],
}

/** Whether a tenant may go from phase `from` to phase `to` (see the top). */
export function isTransition(from: TenantPhase['kind'], to: TenantPhase['kind']): boolean {
  return NEXT_PHASES[from].includes(to)
}

/** The state of a phase that holds one (serving, failed); null for the others. */
export function stateOf(phase: TenantPhase): TenantState | null {
  return phase.kind === 'serving' || phase.kind === 'failed' ? phase.state : null
}

/** The sequence number from which nothing is acknowledged since an append failed; null while none did. */
export function failedFromSeq(phase: TenantPhase): number | null {
  return phase.kind === 'failed' ? phase.fromSeq : phase.kind === 'released' ? phase.failedFromSeq : null
}

/** The phase once an append at `seq` failed; null where no append can be in flight (resting, loading, moved). */
export function afterFailedAppend(phase: TenantPhase, seq: number): TenantPhase | null {
  if (phase.kind === 'released') return { kind: 'released', failedFromSeq: seq }
  if (phase.kind === 'serving' || phase.kind === 'failed') return { kind: 'failed', state: phase.state, fromSeq: seq }
  return null
}
