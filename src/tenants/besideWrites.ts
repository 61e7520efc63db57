/*
 * The bytes a write stores beside its log entry (an upload's: WriteTx.beside,
 * named by the domain through Tx.storeBeside and removeBeside), put in the
 * store's files table under [tenant, key] by the actor's commit in the same
 * synchronous turn as the entry's append. Both stores make one commit of
 * them: LMDB joins every write of a turn into one transaction, and the
 * cluster's group commit sends the directory's writes with the log's
 * (postgres/pgDirectory.ts). So the bytes are durable exactly when the entry
 * is, a crash never keeps one without the other, and a write rolled back
 * before its commit stores nothing. A failed commit fails the append too,
 * which the actor reports; the put's own promise is only let go.
 */
import type { FileTable } from '../persist/ports.js'
import type { BesideWrite } from '../engine/writeTx.js'

export function storeBesideWrites(files: FileTable, tenant: string, writes: readonly BesideWrite[]): void {
  for (const { key, bytes } of writes) {
    const stored = bytes === null ? files.remove([tenant, key]) : files.put([tenant, key], Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength))
    stored.catch(() => undefined)
  }
}
