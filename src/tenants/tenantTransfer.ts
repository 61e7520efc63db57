/*
 * Moving a tenant between data directories: `export` rebuilds the tenant
 * from disk (recoverTenant), encodes it as a snapshot and bundles it with
 * the bytes of its uploaded files (the ones its FileMetadata records name)
 * in an export file (persist/exportFile.ts). `import` reads such a file into a new
 * tenant: the state is checked by loading it, the file bytes go into the
 * directory's files table (GlobalDirectory), and installState writes the snapshot, the e-mail index
 * and the directory row (last, so the tenant exists only when complete).
 *
 * `--as <name>` imports under another name: the records keep their ids;
 * only the Account's `urlPrefix`, which is the tenant's host name, follows
 * the new name. A snapshot file given to import is refused naming
 * `restore`, which takes it.
 */
import fs from 'node:fs'
import { FileMetadata } from '../domain/resources/fileMetadata.js'
import { TenantState } from '../engine/tenantState.js'
import { isValidTenantName } from '../domain/tenantName.js'
import { decodeExport, encodeExport, ExportInvalidError, type ExportedFile, type TenantExport } from '../persist/exportFile.js'
import { installState, objectCount, type InstalledState } from './installState.js'
import type { Storage } from '../persist/ports.js'
import type { ProgressFactory } from '../progress.js'
import { loadSnapshotBody, snapshotSourceOf } from './recovery.js'
import { recoverShowingProgress, takeTenantName } from './restoreSource.js'
import { directoryRow } from './tenantDirectory.js'
import { encodeSnapshotInSlices, writeFileAtomically } from '../persist/snapshotFile.js'

class TransferError extends Error {}

export interface ExportResult {
  seq: number
  objects: number
  files: number
  bytes: number
  /** File keys named by metadata whose bytes are not stored (exported without bytes). */
  missingFiles: string[]
}

export async function exportTenant(tenant: string, dataDir: string, store: Storage, outFile: string, startProgress?: ProgressFactory): Promise<ExportResult> {
  const info = directoryRow(store, tenant)
  if (info === undefined) throw new TransferError(`no tenant '${tenant}' in ${dataDir}`)
  const { state } = await recoverShowingProgress(tenant, store, undefined, startProgress)
  const objects = objectCount(state)
  const encode = startProgress?.(`encode ${tenant}`, 'records', objects)
  const { source, release } = snapshotSourceOf(state)
  const snapshotBytes = await encodeSnapshotInSlices(tenant, state.seq, Date.now(), source, (done) => encode?.update(done)).finally(release)
  encode?.finish()
  const files: ExportedFile[] = []
  const missingFiles: string[] = []
  for (const rec of state.collection(FileMetadata.type).values()) {
    const key = rec.fileKey as string
    const bytes = await store.files.get([tenant, key])
    if (bytes === undefined) missingFiles.push(key)
    else files.push({ key, bytes: Buffer.from(bytes) })
  }
  const bytes = encodeExport({ tenant, createdAt: info.createdAt, exportedAt: Date.now(), seq: state.seq, snapshotBytes, files })
  await writeFileAtomically(outFile, bytes)
  return { seq: state.seq, objects, files: files.length, bytes: bytes.length, missingFiles }
}

/** The export file's content; a file that is not one is refused naming the file (and, for a snapshot, `restore`). */
function decodeExportFile(fromFile: string): TenantExport {
  try {
    return decodeExport(fs.readFileSync(fromFile))
  } catch (error) {
    if (error instanceof ExportInvalidError) throw new TransferError(`${fromFile}: ${error.message}`)
    throw error
  }
}

export interface ImportResult extends InstalledState {
  tenant: string
  from: string
  files: number
}

/**
 * Runs the part of an import that writes the tenant: at once by default; in cluster mode as the tenant's only
 * writer (cluster/clusterTools.ts: the lease held, the tenant's store prepared).
 */
export type TenantWriter = <T>(tenant: string, write: () => Promise<T>) => Promise<T>

const writeAtOnce: TenantWriter = (_tenant, write) => write()

export async function importTenant(
  fromFile: string,
  dataDir: string,
  store: Storage,
  asName: string | undefined,
  startProgress?: ProgressFactory,
  asWriter: TenantWriter = writeAtOnce,
): Promise<ImportResult> {
  const content = decodeExportFile(fromFile)
  const tenant = asName ?? content.tenant
  if (!isValidTenantName(tenant)) throw new TransferError(`'${tenant}' is not a valid tenant name (lower-case letters, digits and '-', not reserved)`)
  if (directoryRow(store, tenant) !== undefined) throw new TransferError(`tenant '${tenant}' exists in ${dataDir}; import it under another name with --as <name>`)
  const installed = await asWriter(tenant, async () => {
    if (store.snapshots.list(tenant).length > 0 || store.lastSeq(tenant) > 0) {
      throw new TransferError(`tenant '${tenant}' has no directory row but snapshots or log entries in ${dataDir} (an interrupted import?); remove them first`)
    }
    const { body } = content.snapshot
    if (tenant !== content.tenant) takeTenantName(body, tenant)
    const state = new TenantState(tenant)
    const load = startProgress?.(`load ${fromFile}`, 'records', null)
    loadSnapshotBody(state, body, (done) => load?.update(done))
    load?.finish()
    for (const file of content.files) void store.files.put([tenant, file.key], file.bytes)
    const encode = startProgress?.(`import ${tenant}`, 'records', objectCount(state))
    const written = await installState(state, store, { createdAt: content.createdAt, onProgress: (done) => encode?.update(done) })
    encode?.finish()
    return written
  })
  return { ...installed, tenant, from: content.tenant, files: content.files.length }
}
