/*
 * `timeledger restore <tenant>`: replaces a tenant's state by a snapshot
 * file (--from, of this tenant or, with --as, of another) or by an earlier
 * point of its own history (--to-seq, --to-time). Where it runs depends on
 * who holds the data: with a server holding the data directory, in that
 * server through its admin listener (the tenant's requests wait only for
 * the swap); in cluster mode, a point of history through the node holding
 * the tenant, a file as the tenant's only writer; otherwise in this
 * process. --dry-run only says what a restore to that point would undo.
 */
import path from 'node:path'
import { adminTarget, callAdminWithProgress } from './admin/adminClient.js'
import { restoreOnline, withClusterStore } from './cluster/clusterTools.js'
import { UsageError, type Command } from './commandLine.js'
import { withStore } from './commandStore.js'
import { undoneSince, undoneText } from './logReport.js'
import { restoreOutcomeText, type RestoreOutcome } from './operatorReports.js'
import { runningServer } from './persist/dataDirLock.js'
import { checkReachable, readHistory, seqAtTime } from './persist/history.js'
import type { Storage } from './persist/ports.js'
import { progress } from './progress.js'
import { installState, objectCount } from './tenants/installState.js'
import { parseRestoreSource, rebuildState, type RestoreSource } from './tenants/restoreSource.js'
import { directoryRow } from './tenants/tenantDirectory.js'

export const RESTORE_COMMAND: Command = {
  summary: "replace a tenant's state by a snapshot file or an earlier point of its history (online when a server runs)",
  usage:
    'restore <tenant> --from <snapshot file> [--as <tenant>] | --to-seq <n> | --to-time <ISO time>\n\n' +
    '--to-seq and --to-time rebuild the tenant as it was after that log entry (for a time: the last entry at or before it);\n' +
    '--from takes a snapshot file (.tlsnap) of this tenant; one taken of another tenant is refused unless --as names this\n' +
    "tenant again (its account then takes this tenant's name). Export files go to 'import'.\n" +
    "'history <tenant>' lists the reachable points. The result becomes the current state as a new snapshot; the history\n" +
    'before it stays. --dry-run (with --to-seq or --to-time) says what the restore would undo, per resource: the\n' +
    'objects created, changed and removed since that point; it changes nothing and works while a server runs.\n' +
    'Otherwise, with a server holding the data directory, the restore runs in that server through its admin\n' +
    'listener (at the port its lock, DATA_DIR/server.lock, names; with ADMIN_KEY or DATA_DIR/admin-key); otherwise here.',
  options: { from: 'value', as: 'value', 'to-seq': 'value', 'to-time': 'value', 'dry-run': 'flag' },
  positionals: 1,
  async run(line, config) {
    const tenant = line.positionals[0]
    if (tenant === undefined) throw new UsageError('restore needs <tenant>')
    const source = parseRestoreSource({ from: line.text('from'), toSeq: line.text('to-seq'), toTime: line.text('to-time'), as: line.text('as') })
    if (line.flag('dry-run')) {
      if ('file' in source) throw new UsageError('--dry-run goes with --to-seq or --to-time')
      await withStore(config, async (store, { prepare }) => {
        await prepare(tenant)
        if (directoryRow(store, tenant) === undefined) throw new Error(`no tenant '${tenant}'`)
        const history = readHistory(tenant, store)
        const pointSeq = 'toSeq' in source ? checkReachable(history, source.toSeq) : seqAtTime(history, store, source.toTimeMs)
        console.log(undoneText(tenant, pointSeq, undoneSince(store, tenant, pointSeq)))
      })
      return
    }
    const cluster = config.cluster
    if (cluster !== null && !('file' in source)) {
      const point = 'toSeq' in source ? { toSeq: source.toSeq } : { toTime: new Date(source.toTimeMs).toISOString() }
      console.log(`restoring online through the node holding '${tenant}'`)
      const answer = await withClusterStore(cluster, (store) => restoreOnline(store, cluster, tenant, point))
      console.log(restoreOutcomeText(tenant, answer as unknown as RestoreOutcome))
      return
    }
    if (cluster !== null) {
      await withStore(config, (store, tools) =>
        tools.asWriter(tenant, false, async () => {
          if (directoryRow(store, tenant) === undefined) throw new Error(`no tenant '${tenant}'`)
          await restoreHere(tenant, store, source)
        }),
      )
      return
    }
    const server = runningServer(config.dataDir)
    if (server !== null) {
      // The listener of the server holding this data directory, as its lock names it (not ADMIN_PORT: another server may have that).
      const target = adminTarget(config, server)
      console.log(`a server (pid ${server.pid}) holds ${config.dataDir}: restoring online through its admin listener at ${target.address}`)
      // The server streams its progress lines (load, replay, snapshot, swap); they go to stderr like local progress.
      const answer = await callAdminWithProgress(target, 'POST', `/tenants/${encodeURIComponent(tenant)}/restore`, adminRestoreBody(source), (line) => process.stderr.write(`${line}\n`))
      console.log(restoreOutcomeText(tenant, answer as unknown as RestoreOutcome))
      return
    }
    await withStore(config, (store) => restoreHere(tenant, store, source))
  },
}

/** Rebuilds a tenant from its history or a snapshot file and installs the result, in this process. */
async function restoreHere(tenant: string, store: Storage, source: RestoreSource): Promise<void> {
  const { state, description, pointSeq } = await rebuildState(tenant, store, source, progress)
  const encode = progress(`snapshot ${tenant}`, 'records', objectCount(state))
  const installed = await installState(state, store, { onProgress: (done) => encode.update(done) })
  encode.finish()
  console.log(restoreOutcomeText(tenant, { ...installed, restored: description, pointSeq }))
}

/** The admin listener's restore body for a source given on the command line (a file path made absolute). */
function adminRestoreBody(source: RestoreSource): Record<string, unknown> {
  if ('file' in source) return source.as === undefined ? { from: path.resolve(source.file) } : { from: path.resolve(source.file), as: source.as }
  if ('toSeq' in source) return { toSeq: source.toSeq }
  return { toTime: new Date(source.toTimeMs).toISOString() }
}
