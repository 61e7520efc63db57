/*
 * A clean stop snapshots every tenant in memory whose state no snapshot
 * holds yet, one after the other, so the next start loads each from a
 * snapshot instead of replaying its log. A tenant with nothing logged since
 * it was loaded from a snapshot, restored, or last snapshotted is not
 * written again (rewriting a million records unchanged took a second of
 * the stop), and one whose snapshot is running is waited for (the store
 * closes after). A stop of a server holding a million changed records
 * writes for seconds: the progress shown (`startProgress`) counts the
 * records written over all the tenants, so the operator sees it go.
 */
import type { ProgressFactory } from '../progress.js'
import { objectCount } from './installState.js'
import type { TenantActor } from './tenantActor.js'

export async function snapshotEvery(inMemory: readonly TenantActor[], startProgress?: ProgressFactory): Promise<void> {
  const actors = inMemory.filter((actor) => !actor.snapshotUpToDate)
  const shown = startProgress?.(
    `snapshot ${actors.length} ${actors.length === 1 ? 'tenant' : 'tenants'}`,
    'records',
    actors.reduce((sum, actor) => sum + objectCount(actor.state), 0),
  )
  let before = 0
  for (const actor of actors) {
    await actor.snapshot((done) => shown?.update(before + done))
    // A snapshot that was already running when the stop began may not hold the newest entries.
    if (actor.logEntriesSinceSnapshot > 0) await actor.snapshot((done) => shown?.update(before + done))
    before += objectCount(actor.state)
    shown?.update(before)
  }
  shown?.finish()
}
