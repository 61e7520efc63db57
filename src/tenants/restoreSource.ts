/*
 * Where a restore takes its state from: a snapshot file (`--from`), or a
 * point of the tenant's own history (`--to-seq`, `--to-time`), rebuilt from
 * the newest valid snapshot at or before that point plus the log up to it
 * (recoverTenantInTurns with `uptoSeq`). Used by the offline CLI and the admin
 * listener's online restore alike; installState then makes the result
 * current.
 *
 * A restore ends every session of the tenant: the rebuilt state keeps no
 * access or refresh token and no pending password confirmation (domain/sessions.ts
 * names those types), so a token logged out, a refresh token used or a
 * session a password change ended before the restore point cannot come
 * back, and everyone logs in again. It is done here, on the state before it
 * is written as a snapshot, so the snapshot (and every replay of it) holds
 * exactly that.
 *
 * A snapshot file names the tenant it was taken of. Restoring one of
 * another tenant would hand this tenant that tenant's account, users and
 * password hashes (whose owner could then log in here), so it is refused
 * unless the operator names the tenant restored again with `--as <tenant>`
 * (as `import --as` names a new one); then the account takes this tenant's
 * name. An export file given to restore is refused naming `import`.
 */
import { SESSION_TYPES } from '../domain/sessions.js'
import { TenantState } from '../engine/tenantState.js'
import type { Progress, ProgressFactory } from '../progress.js'
import { checkReachable, entriesToReplay, readHistory, seqAtTime } from '../persist/history.js'
import { RestorePointError, type Storage } from '../persist/ports.js'
import { loadSnapshotBodyInTurns, recoverTenantInTurns, type Recovered } from './recovery.js'
import { exportedTenantOf } from '../persist/exportFile.js'
import type { SnapshotBody } from '../persist/snapshotFile.js'
import { readSnapshotFile } from '../persist/snapshotReading.js'

/** `as`: the tenant restored, named again to allow a snapshot taken of another tenant (see the top). */
export type RestoreSource = { file: string; as?: string } | { toSeq: number } | { toTimeMs: number }

/** Exactly one of the three options, checked; the texts are what the operator typed. */
export function parseRestoreSource(options: { from?: string | undefined; toSeq?: string | undefined; toTime?: string | undefined; as?: string | undefined }): RestoreSource {
  const given = [options.from, options.toSeq, options.toTime].filter((value) => value !== undefined)
  if (given.length !== 1) throw new RestorePointError('name exactly one of --from <snapshot file>, --to-seq <n>, --to-time <ISO time>')
  if (options.as !== undefined && options.from === undefined) throw new RestorePointError('--as goes with --from <snapshot file> only')
  if (options.from !== undefined) return options.as === undefined ? { file: options.from } : { file: options.from, as: options.as }
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
export async function recoverShowingProgress(tenant: string, store: Storage, uptoSeq: number | undefined, startProgress?: ProgressFactory): Promise<Recovered> {
  const entriesTotal = entriesToReplay(tenant, store, uptoSeq)
  const load = startProgress?.(`load ${tenant}`, 'records', null)
  let replay: Progress | undefined
  const startReplay = (): Progress | undefined => {
    load?.finish()
    return startProgress?.(`replay ${tenant}`, 'log entries', entriesTotal)
  }
  const recovered = await recoverTenantInTurns(tenant, store, {
    uptoSeq,
    onLoad: (done) => load?.update(done),
    onProgress: (done) => {
      replay ??= startReplay()
      replay?.update(done)
    },
  })
  replay ??= startReplay()
  replay?.update(recovered.report.replayedEntries)
  replay?.finish()
  return recovered
}

/** Gives a state taken of another tenant this tenant's name: the Account's `urlPrefix` is the tenant's host name. */
export function takeTenantName(body: SnapshotBody, tenant: string): void {
  for (const account of body.collections.Account ?? []) (account as Record<string, unknown>).urlPrefix = tenant
}

/** An export file given to restore: refused, naming the command that takes it. */
function refuseExportFile(file: string, tenant: string): void {
  const exported = exportedTenantOf(file)
  if (exported === null) return
  throw new RestorePointError(
    `${file} is an export file (of tenant '${exported}'), not a snapshot: 'import --from ${file}' takes it (with --as <name> for another name); ` +
      `restore ${tenant} --from takes a snapshot file (.tlsnap)`,
  )
}

/** Removes every session record (tokens, refresh tokens, password confirmations, calendar secrets); answers how many. */
function endAllSessions(state: TenantState): number {
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
export async function rebuildState(tenant: string, store: Storage, source: RestoreSource, startProgress?: ProgressFactory): Promise<RebuiltState> {
  if ('file' in source) {
    refuseExportFile(source.file, tenant)
    const { header, body } = readSnapshotFile(source.file)
    const fromTenant = typeof header.tenant === 'string' ? header.tenant : '(unnamed)'
    if (fromTenant !== tenant) {
      if (source.as !== tenant) {
        const asWrong = source.as === undefined ? '' : ` (--as names '${source.as}', not the tenant restored)`
        throw new RestorePointError(
          `${source.file} is a snapshot of tenant '${fromTenant}', not of '${tenant}'${asWrong}: restoring it would give '${tenant}' the account, ` +
            `users and passwords of '${fromTenant}'. To do that on purpose, add --as ${tenant} (the account then takes the name '${tenant}')`,
        )
      }
      takeTenantName(body, tenant)
    }
    const state = new TenantState(tenant)
    const load = startProgress?.(`load ${source.file}`, 'records', null)
    await loadSnapshotBodyInTurns(state, body, (done) => load?.update(done))
    load?.finish()
    endAllSessions(state)
    const renamed = fromTenant === tenant ? '' : ` as '${tenant}'`
    return { state, description: `snapshot file ${source.file} (taken at seq ${header.seq} of '${fromTenant}'${renamed}, ${new Date(header.at).toISOString()})`, pointSeq: null }
  }
  const history = readHistory(tenant, store)
  const seq = 'toSeq' in source ? checkReachable(history, source.toSeq) : seqAtTime(history, store, source.toTimeMs)
  const { state, report } = await recoverShowingProgress(tenant, store, seq, startProgress)
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
