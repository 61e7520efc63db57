/*
 * Renaming a tenant (`accounts/{id}/$setUrlPrefix`). A tenant's
 * name is its host and the key of everything stored for it (its log, its
 * snapshots, its files, its rows in the directory and the e-mail and
 * confirmation indexes), so renaming is moving the whole tenant, built from
 * the pieces the import (tenantTransfer.ts) and the restore use:
 *
 *   1. inside the old tenant's exclusive job (no request or write runs in it
 *      meanwhile; others wait in its mailbox), once everything it logged is
 *      durable, its state is copied into a new state under the new name and
 *      `decide` runs on it as a write (the Account's `urlPrefix` and version);
 *   2. the bytes of its uploaded files are copied to the new name, and
 *      installState writes the new state as the new tenant's first snapshot,
 *      its e-mail and confirmation index entries and, last, its directory
 *      row: from then on the new name is a complete tenant;
 *   3. the old name's entries leave the indexes, its files, log, snapshots
 *      and, last, its directory row are removed, and its actor is retired:
 *      what waited for it gets 401 TL01-1005 (TenantRenamed), as a request for
 *      any unknown tenant does.
 *
 * Every record keeps its id and its version but the Account's; sessions are
 * records too, so a token goes on working at the new address. A crash before
 * step 2 ends leaves the old tenant as it was; a crash during step 3 leaves
 * both names (the new one complete), and the old one is removed by the
 * operator. The history before the rename stays under the old name only
 * until step 3: a restore of the new name reaches back to the rename.
 */
import { FileMetadata } from '../domain/resources/fileMetadata.js'
import { TenantState } from '../engine/tenantState.js'
import { WriteTx } from '../engine/writeTx.js'
import type { Storage } from '../persist/ports.js'
import { indexGlobalsOfState } from './globalIndexes.js'
import { installState } from './installState.js'
import { loadSnapshotBody, snapshotBodyOf } from './recovery.js'
import { directoryRow, removeRow } from './tenantDirectory.js'

/** The file keys the state's metadata names (the bytes stored beside it under the tenant's name). */
function fileKeysOf(state: TenantState): string[] {
  return [...state.collection(FileMetadata.type).values()].map((rec) => rec.fileKey as string)
}

/** Whether nothing is stored under the name (no directory row, log entry or snapshot): a rename may take it. */
export function nothingStoredUnder(store: Storage, name: string): boolean {
  return directoryRow(store, name) === undefined && store.lastSeq(name) === 0 && store.snapshots.list(name).length === 0
}

/** Step 1 and 2: the state under the new name with `decide` applied, installed as a complete tenant; what decide gave. */
export async function installUnderNewName<T>(store: Storage, state: TenantState, to: string, createdAt: number, decide: (tx: WriteTx) => T): Promise<T> {
  const moved = new TenantState(to)
  loadSnapshotBody(moved, snapshotBodyOf(state))
  const decided = decide(new WriteTx(moved, Date.now()))
  for (const key of fileKeysOf(state)) {
    const bytes = await store.files.get([state.tenant, key])
    if (bytes !== undefined) void store.files.put([to, key], bytes)
  }
  await installState(moved, store, { createdAt })
  return decided
}

/** Step 3: everything stored under the old name goes; the directory row last. */
export async function removeOldName(store: Storage, state: TenantState): Promise<void> {
  const from = state.tenant
  indexGlobalsOfState(store, from, new TenantState(from))
  for (const key of fileKeysOf(state)) void store.files.remove([from, key])
  await store.flushed()
  await store.truncateAfter(from, 0)
  await store.snapshots.removeOlderThan(from, Number.MAX_SAFE_INTEGER)
  removeRow(store, from)
  await store.flushed()
}
