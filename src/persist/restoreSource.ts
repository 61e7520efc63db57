/*
 * Where a restore takes its state from: a snapshot file (`--from`), or a
 * point of the tenant's own history (`--to-seq`, `--to-time`), rebuilt from
 * the newest valid snapshot at or before that point plus the log up to it
 * (recoverTenantInTurns with `uptoSeq`). Used by the offline CLI and the admin
 * listener's online restore alike; installState then makes the result
 * current.
 *
 * A restore ends every session of the tenant: the rebuilt state keeps no
 * access or refresh token and no pending password confirmation (sessions.ts
 * names those types), so a token logged out, a refresh token used or a
 * session a password change ended before the restore point cannot come
 * back, and everyone logs in again. It is done here, on the state before it
 * is written as a snapshot, so the snapshot (and every replay of it) holds
 * exactly that.
 */
import { SESSION_TYPES } from '../domain/sessions.js'
import { TenantState } from '../engine/tenantState.js'
import type { Progress, ProgressFactory } from '../progress.js'
import { checkReachable, entriesToReplay, readHistory, RestorePointError, seqAtTime } from './history.js'
import type { LogStore } from './logStore.js'
import { loadSnapshotBodyInTurns, recoverTenantInTurns, type Recovered } from './recovery.js'
import { readSnapshotFile } from './snapshotFile.js'

export type RestoreSource = { file: string } | { toSeq: number } | { toTimeMs: number }

/** Exactly one of the three options, checked; the texts are what the operator typed. */
export function parseRestoreSource(options: { from?: string | undefined; toSeq?: string | undefined; toTime?: string | undefined }): RestoreSource {
  const given = [options.from, options.toSeq, options.toTime].filter((value) => value !== undefined)
  if (given.length !== 1) throw new RestorePointError('name exactly one of --from <snapshot file>, --to-seq <n>, --to-time <ISO time>')
  if (options.from !== undefined) return { file: options.from }
  if (options.toSeq !== undefined) {
    const seq = Number(options.toSeq)
    if (!Number.isSafeInteger(seq) || seq < 1) throw new RestorePointError(`--to-seq needs a sequence number of 1 or more, got '${options.toSeq}'`)
    return { toSeq: seq }
  }
  const text = options.toTime as string
  const atMs = /^\d{4}-\d{2}-\d{2}T/.test(text) ? Date.parse(text) : Number.NaN
  if (Number.isNaN(atMs)) throw new RestorePointError(`--to-time needs an ISO 8601 time such as 2026-11-23T18:30:00Z, got '${text}'`)
  return { toTimeMs: atMs }
}

export interface RebuiltState {
  state: TenantState
  /** What was restored, for the operator. */
  description: string
  /** The point of the tenant's own history restored to; null for a snapshot file. */
  pointSeq: number | null
}

/** recoverTenantInTurns (up to `uptoSeq`) with a progress line for the snapshot load and one for the log replay. */
export async function recoverShowingProgress(
  tenant: string,
  dataDir: string,
  store: LogStore,
  uptoSeq: number | undefined,
  startProgress?: ProgressFactory,
): Promise<Recovered> {
  const entriesTotal = entriesToReplay(tenant, dataDir, store, uptoSeq)
  const load = startProgress?.(`load ${tenant}`, 'records', null)
  let replay: Progress | undefined
  const startReplay = (): Progress | undefined => {
    load?.finish()
    return startProgress?.(`replay ${tenant}`, 'log entries', entriesTotal)
  }
  const recovered = await recoverTenantInTurns(tenant, dataDir, store, {
    uptoSeq,
    onLoad: (done) => load?.update(done),
    onProgress: (done) => (replay ??= startReplay())?.update(done),
  })
  replay ??= startReplay()
  replay?.update(recovered.report.replayedEntries)
  replay?.finish()
  return recovered
}

/** Removes every session record (tokens, refresh tokens, password confirmations); answers how many. */
export function endAllSessions(state: TenantState): number {
  let ended = 0
  for (const type of SESSION_TYPES) {
    for (const rec of [...state.collection(type).values()]) {
      state.applyOp({ op: 'del', type, id: rec.id })
      ended += 1
    }
  }
  return ended
}

/** Rebuilt a slice per event-loop turn (recoverTenantInTurns), so a server doing it keeps serving other tenants. */
export async function rebuildState(
  tenant: string,
  dataDir: string,
  store: LogStore,
  source: RestoreSource,
  startProgress?: ProgressFactory,
): Promise<RebuiltState> {
  if ('file' in source) {
    const { header, body } = readSnapshotFile(source.file)
    const state = new TenantState(tenant)
    const load = startProgress?.(`load ${source.file}`, 'records', null)
    await loadSnapshotBodyInTurns(state, body, (done) => load?.update(done))
    load?.finish()
    endAllSessions(state)
    return { state, description: `snapshot file ${source.file} (taken at seq ${header.seq} of '${header.tenant}', ${new Date(header.at).toISOString()})`, pointSeq: null }
  }
  const history = readHistory(tenant, dataDir, store)
  const seq = 'toSeq' in source ? checkReachable(history, source.toSeq) : seqAtTime(history, store, source.toTimeMs)
  const { state, report } = await recoverShowingProgress(tenant, dataDir, store, seq, startProgress)
  if (state.seq !== seq) {
    const skipped = report.skippedSnapshots.map((skip) => `${skip.file}: ${skip.reason}`).join('; ')
    throw new RestorePointError(`tenant '${tenant}': the rebuild reached seq ${state.seq}, not ${seq}${skipped === '' ? '' : ` (skipped snapshots: ${skipped})`}`)
  }
  endAllSessions(state)
  const at = store.entryAt(tenant, seq)?.at
  const when = at === undefined ? '' : `, written ${new Date(at).toISOString()}`
  const base = report.snapshotFile === null ? 'the empty tenant' : `snapshot seq ${report.snapshotSeq}`
  return { state, description: `seq ${seq}${when} (${base} + ${report.replayedEntries} log entries)`, pointSeq: seq }
}
