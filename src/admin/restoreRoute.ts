/*
 * Online restore on the admin listener:
 *
 *   POST /tenants/:tenant/restore   body {"from": "<snapshot file on this host>"[, "as": "<tenant>"]}
 *                                        | {"toSeq": n} | {"toTime": "<ISO time>"}
 *
 * A snapshot taken of another tenant is refused (400) unless "as" names
 * the tenant restored (tenants/restoreSource.ts); an export file is refused naming
 * the import command.
 *
 * The new state is rebuilt from disk first (rebuildState, a slice per
 * event-loop turn) while the tenant and all others keep serving; only the
 * decoding of a snapshot file is done in one piece. Then, inside the tenant actor's exclusive job, installState
 * writes it as a snapshot with the next free sequence number and the actor
 * swaps it in: requests to this tenant wait for the job (the mailbox) and
 * then see the restored state; the log continues after it. Other tenants
 * have their own actors and never wait. A tenant that cannot be opened (its
 * log is damaged) has no actor: its requests get 503 until the snapshot is
 * in place; then the registry reopens it, and its next request activates the
 * restored state.
 *
 * Answers 200 {tenant, seq, previousLastSeq, objects, restored, pointSeq,
 * file, at, bytes, durationMs}; a point outside the history or a bad snapshot file is a 400
 * naming what is reachable, a log that cannot be replayed to the point a
 * 412, a restore of the same tenant already running a 412 too.
 *
 * Progress. A client that sends `Accept: application/x-ndjson` gets the
 * answer as JSON lines while the work runs: `{"progress": "<text>"}` for each
 * progress line (the plain lines of src/progress.ts: the load, the replay and
 * the snapshot write, each with its final count and time, and the wait for
 * the swap), then exactly one last line, `{"result": {...}}` with the answer
 * above or `{"error": {...}}` with the error body (which has the `status`). Input
 * that is refused before the work starts (bad body, unknown tenant, a
 * restore already running) gets its usual 4xx answer instead.
 */
import { ApiError } from '../domain/errors.js'
import type { TenantActor } from '../tenants/tenantActor.js'
import type { TenantRegistry } from '../tenants/tenantRegistry.js'
import { RestorePointError } from '../persist/history.js'
import { installState, type InstalledState } from '../tenants/installState.js'
import { LogCorruptError } from '../persist/ports.js'
import { RecoveryError } from '../tenants/recovery.js'
import { parseRestoreSource, rebuildState, type RestoreSource } from '../tenants/restoreSource.js'
import { SnapshotInvalidError } from '../persist/snapshotFile.js'
import { TenantRefusal } from '../tenants/tenantErrors.js'
import { engineErrorAsApiError } from '../http/engineErrors.js'
import { progress, type ProgressFactory } from '../progress.js'
import { answerForError, jsonAnswer, type AdminRequest, type AdminServer } from './adminServer.js'
import { LineStream } from './lineStream.js'

export const PROGRESS_LINES_TYPE = 'application/x-ndjson'

function sourceOf(request: AdminRequest): RestoreSource {
  let body: unknown
  try {
    body = JSON.parse(request.body.toString('utf8'))
  } catch {
    throw new ApiError('TL01-1105', 'the body must be JSON: {"from": file} or {"toSeq": n} or {"toTime": ISO time}')
  }
  if (typeof body !== 'object' || body === null) throw new ApiError('TL01-1105', 'the body must be a JSON object')
  const { from, toSeq, toTime, as } = body as Record<string, unknown>
  const text = (value: unknown): string | undefined => (value === undefined || value === null ? undefined : String(value))
  try {
    return parseRestoreSource({ from: text(from), toSeq: text(toSeq), toTime: text(toTime), as: text(as) })
  } catch (error) {
    throw asApiError(error)
  }
}

/** The tenant's actor, or null when it cannot be opened (damaged): then there is nothing in memory to swap. */
async function actorOf(registry: TenantRegistry, tenant: string): Promise<TenantActor | null> {
  let actor: TenantActor | undefined
  try {
    actor = await registry.open(tenant)
  } catch (error) {
    // Closed as damaged, or the server is shutting down: there is no actor whose state could be swapped.
    if (error instanceof TenantRefusal) return null
    throw error
  }
  if (actor === undefined) throw new ApiError('TL01-1101', `there is no tenant '${tenant}' (a new tenant comes with the import command)`)
  return actor
}

function asApiError(error: unknown): unknown {
  if (error instanceof RestorePointError || error instanceof SnapshotInvalidError) return new ApiError('TL01-1105', error.message)
  if ((error as NodeJS.ErrnoException).code === 'ENOENT') return new ApiError('TL01-1105', (error as Error).message)
  if (error instanceof RecoveryError || error instanceof LogCorruptError) return new ApiError('TL01-1106', error.message)
  return engineErrorAsApiError(error)
}

type RestoreAnswer = InstalledState & { tenant: string; restored: string; pointSeq: number | null; durationMs: number }

/** Rebuilds, then swaps in (inside the actor's exclusive job); `note` hears what the work is waiting for. */
async function restore(
  registry: TenantRegistry,
  tenant: string,
  actor: TenantActor | null,
  source: RestoreSource,
  startProgress?: ProgressFactory,
  note?: (text: string) => void,
): Promise<RestoreAnswer> {
  const started = performance.now()
  const { state, description, pointSeq } = await rebuildState(tenant, registry.store, source, startProgress)
  const swap = async () => {
    const encode = startProgress?.(`snapshot ${tenant}`, 'records', null)
    const installed = await installState(state, registry.store, { onProgress: (done) => encode?.update(done) })
    encode?.finish()
    actor?.replaceState(state, installed.at)
    registry.reopen(tenant)
    return installed
  }
  note?.(`swap ${tenant}: the restored state is written as a snapshot and put in place; the tenant's requests wait meanwhile`)
  const installed = actor === null ? await swap() : await actor.exclusive(swap)
  if (!registry.config.quiet) console.log(`tenant '${tenant}': restored online to ${description} as seq ${installed.seq}`)
  return { tenant, ...installed, restored: description, pointSeq, durationMs: Math.round(performance.now() - started) }
}

export function registerRestoreRoute(admin: AdminServer, registry: TenantRegistry): void {
  const restoring = new Set<string>()
  admin.route('POST', '/tenants/:tenant/restore', async (request) => {
    const tenant = request.params.tenant as string
    const source = sourceOf(request)
    if (restoring.has(tenant)) throw new ApiError('TL01-1106', `a restore of tenant '${tenant}' is running`)
    // Marked before the tenant is opened (which may take turns), so a second restore is refused meanwhile.
    restoring.add(tenant)
    let actor: TenantActor | null
    try {
      actor = await actorOf(registry, tenant)
    } catch (error) {
      restoring.delete(tenant)
      throw error
    }
    if (!(request.headers.get('accept') ?? '').includes(PROGRESS_LINES_TYPE)) {
      try {
        return jsonAnswer(200, await restore(registry, tenant, actor, source))
      } catch (error) {
        throw asApiError(error)
      } finally {
        restoring.delete(tenant)
      }
    }
    const lines = new LineStream()
    const say = (text: string) => lines.push(JSON.stringify({ progress: text }))
    const sink = { isTTY: false, write: (text: string) => text.split('\n').filter((line) => line !== '').forEach(say) }
    say(`restore ${tenant}: rebuilding the state`)
    restore(registry, tenant, actor, source, (label, unit, total) => progress(label, unit, total, sink), say)
      .then(
        (answer) => lines.push(JSON.stringify({ result: answer })),
        (error: unknown) => {
          const failed = answerForError(asApiError(error), request.method, request.path)
          lines.push(`{"error":${String(failed.body)}}`)
        },
      )
      .finally(() => {
        restoring.delete(tenant)
        lines.end()
      })
    return { status: 200, headers: { 'Content-Type': `${PROGRESS_LINES_TYPE}; charset=utf-8` }, chunks: lines }
  })
}
