/*
 * Online restore on the admin listener:
 *
 *   POST /tenants/:tenant/restore   body {"from": "<snapshot file on this host>"}
 *                                        | {"toSeq": n} | {"toTime": "<ISO time>"}
 *
 * The new state is rebuilt from disk first (rebuildState, a slice per
 * event-loop turn) while the tenant and all others keep serving; only the
 * decoding of a snapshot file is done in one piece. Then, inside the tenant actor's exclusive job, installState
 * writes it as a snapshot with the next free sequence number and the actor
 * swaps it in: requests to this tenant wait for the job (the mailbox) and
 * then see the restored state; the log continues after it. Other tenants
 * have their own actors and never wait. A tenant that cannot be opened (its
 * log is damaged) has no actor: its requests get 503 until the snapshot is
 * in place, and the first request after it activates the restored state.
 *
 * Answers 200 {tenant, seq, previousLastSeq, objects, restored, pointSeq,
 * file, bytes, durationMs}; a point outside the history or a bad snapshot file is a 400
 * naming what is reachable, a log that cannot be replayed to the point a
 * 412, a restore of the same tenant already running a 409.
 */
import { ApiError } from '../domain/errors.js'
import type { TenantActor } from '../engine/tenantActor.js'
import type { TenantRegistry } from '../engine/tenantRegistry.js'
import { RestorePointError } from '../persist/history.js'
import { installState } from '../persist/installState.js'
import { LogCorruptError } from '../persist/logStore.js'
import { RecoveryError } from '../persist/recovery.js'
import { parseRestoreSource, rebuildState, type RestoreSource } from '../persist/restoreSource.js'
import { SnapshotInvalidError } from '../persist/snapshotFile.js'
import { jsonAnswer, type AdminRequest, type AdminServer } from './adminServer.js'

function sourceOf(request: AdminRequest): RestoreSource {
  let body: unknown
  try {
    body = JSON.parse(request.body.toString('utf8'))
  } catch {
    throw new ApiError('TL01-1105', 'the body must be JSON: {"from": file} or {"toSeq": n} or {"toTime": ISO time}')
  }
  if (typeof body !== 'object' || body === null) throw new ApiError('TL01-1105', 'the body must be a JSON object')
  const { from, toSeq, toTime } = body as Record<string, unknown>
  const text = (value: unknown): string | undefined => (value === undefined || value === null ? undefined : String(value))
  return parseRestoreSource({ from: text(from), toSeq: text(toSeq), toTime: text(toTime) })
}

/** The tenant's actor, or null when it cannot be opened (damaged): then there is nothing in memory to swap. */
function actorOf(registry: TenantRegistry, tenant: string): TenantActor | null {
  let actor: TenantActor | undefined
  try {
    actor = registry.get(tenant)
  } catch (error) {
    if (error instanceof ApiError && error.code === 'TL01-9011') return null
    throw error
  }
  if (actor === undefined) throw new ApiError('TL01-1005', `there is no tenant '${tenant}' (a new tenant comes with the import command)`)
  return actor
}

function asApiError(error: unknown): unknown {
  if (error instanceof RestorePointError || error instanceof SnapshotInvalidError) return new ApiError('TL01-1105', error.message)
  if ((error as NodeJS.ErrnoException).code === 'ENOENT') return new ApiError('TL01-1105', (error as Error).message)
  if (error instanceof RecoveryError || error instanceof LogCorruptError) return new ApiError('TL01-1106', error.message)
  return error
}

export function registerRestoreRoute(admin: AdminServer, registry: TenantRegistry): void {
  const restoring = new Set<string>()
  admin.route('POST', '/tenants/:tenant/restore', async (request) => {
    const tenant = request.params.tenant as string
    const source = sourceOf(request)
    if (restoring.has(tenant)) throw new ApiError('TL01-1106', `a restore of tenant '${tenant}' is running`)
    restoring.add(tenant)
    const started = performance.now()
    try {
      const actor = actorOf(registry, tenant)
      const { dataDir } = registry.config
      const { state, description, pointSeq } = await rebuildState(tenant, dataDir, registry.store, source)
      const swap = async () => {
        const installed = await installState(state, dataDir, registry.store)
        actor?.replaceState(state)
        return installed
      }
      const installed = actor === null ? await swap() : await actor.exclusive(swap)
      if (!registry.config.quiet) console.log(`tenant '${tenant}': restored online to ${description} as seq ${installed.seq}`)
      return jsonAnswer(200, { tenant, ...installed, restored: description, pointSeq, durationMs: Math.round(performance.now() - started) })
    } catch (error) {
      throw asApiError(error)
    } finally {
      restoring.delete(tenant)
    }
  })
}
