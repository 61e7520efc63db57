/*
 * A clean stop snapshots every tenant in memory, one after the other, so the
 * next start loads each from a snapshot instead of replaying its log. A stop
 * of a server holding a million records writes for seconds: the progress
 * shown (`startProgress`) counts the records written over all the tenants,
 * so the operator sees it go.
 */
import type { ProgressFactory } from '../progress.js'
import { objectCount } from './installState.js'
import type { TenantActor } from './tenantActor.js'

export async function snapshotEvery(actors: readonly TenantActor[], startProgress?: ProgressFactory): Promise<void> {
  const shown = startProgress?.(
    `snapshot ${actors.length} ${actors.length === 1 ? 'tenant' : 'tenants'}`,
    'records',
    actors.reduce((sum, actor) => sum + objectCount(actor.state), 0),
  )
  let before = 0
  for (const actor of actors) {
    await actor.snapshot((done) => shown?.update(before + done))
    before += objectCount(actor.state)
    shown?.update(before)
  }
  shown?.finish()
}
