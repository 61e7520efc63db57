/*
 * The key/value text storage (spec "Key/value text storage", ARCHITECTURE.md §4).
 *
 * An entry is addressed by group, key and scope. `private` (the default)
 * entries belong to the calling user, `public` ones to the tenant. Each is a
 * StorageEntry record whose id is derived from (scope, owner, group, key),
 * so a store is one put of a known id: the first creates the record, a
 * second replaces its text (version + 1). Entries are tenant state like any
 * other record: logged, snapshotted and replayed.
 *
 * The text must be valid UTF-8 of at most 16384 characters, counted as
 * Unicode code points (so '😀' is one character, not two UTF-16 units).
 */
import { ApiError, wrongParameter } from './errors.js'
import { deterministicId } from './hashId.js'
import { changeRecord, insertRecord } from './recordMaking.js'
import { StorageEntry, STORAGE_NAME_PATTERN } from './resources/storageEntry.js'
import type { Rec } from './schema.js'
import type { StateView, Tx } from './tx.js'

const MAX_STORAGE_CHARACTERS = 16384
export const DEFAULT_STORAGE_CONTENT_TYPE = 'text/plain; charset=utf-8'

const NAME = new RegExp(`^${STORAGE_NAME_PATTERN}$`)

type StorageScope = 'private' | 'public'

export interface StorageAddress {
  readonly group: string
  readonly key: string
  readonly scope: StorageScope
}

/** A group or key name, or 400 saying what is wrong with it. */
export function checkStorageName(kind: 'group' | 'key', name: string): string {
  if (!NAME.test(name)) {
    const shown = name.length > 64 ? `${name.slice(0, 64)}…` : name
    throw wrongParameter(`storage ${kind} '${shown}' is invalid: use 1 to 128 characters of A-Z, a-z, 0-9, '.', '_' and '-'`)
  }
  return name
}

function parseStorageScope(text: string | undefined): StorageScope {
  if (text === undefined || text === 'private') return 'private'
  if (text === 'public') return 'public'
  throw wrongParameter(`storage scope '${text.slice(0, 64)}' is invalid: use 'private' or 'public'`)
}

export function storageAddress(group: string, key: string, scope: string | undefined): StorageAddress {
  return { group: checkStorageName('group', group), key: checkStorageName('key', key), scope: parseStorageScope(scope) }
}

function ownerOf(address: StorageAddress, userId: string): string | null {
  return address.scope === 'private' ? userId : null
}

function storageEntryId(address: StorageAddress, userId: string): string {
  return deterministicId('storage', address.scope, ownerOf(address, userId) ?? '', address.group, address.key)
}

/** Code points of valid UTF-8: every byte that does not continue a sequence starts one. */
function countCodePoints(bytes: Uint8Array): number {
  let count = 0
  for (const byte of bytes) if ((byte & 0xc0) !== 0x80) count += 1
  return count
}

/** The body as text: 400 unless valid UTF-8, 412 TL01-9002 above the size limit. */
export function storageText(body: Buffer): string {
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(body)
  } catch {
    throw wrongParameter('a storage entry must be valid UTF-8 text')
  }
  const characters = countCodePoints(body)
  if (characters > MAX_STORAGE_CHARACTERS) {
    throw new ApiError('TL01-9002', `a storage entry holds at most ${MAX_STORAGE_CHARACTERS} characters, this one has ${characters}`)
  }
  return text
}

export function findStorageEntry(state: StateView, address: StorageAddress, userId: string): Rec | undefined {
  return state.get(StorageEntry.type, storageEntryId(address, userId))
}

/** Stores the text under the address: creates the entry or replaces its text. */
export function putStorageEntry(tx: Tx, address: StorageAddress, userId: string, contentType: string, content: string): { rec: Rec; created: boolean } {
  const before = findStorageEntry(tx.state, address, userId)
  if (before !== undefined) return { rec: changeRecord(tx, StorageEntry, before, { contentType, content }), created: false }
  const values = {
    id: storageEntryId(address, userId),
    group: address.group,
    itemKey: address.key,
    publicScope: address.scope === 'public',
    owner: ownerOf(address, userId),
    contentType,
    content,
  }
  return { rec: insertRecord(tx, StorageEntry, values), created: true }
}

/** 404 for an address without an entry. */
export function storageEntryMissing(address: StorageAddress): ApiError {
  return new ApiError('TL01-1101', `${storageDescription(address)} not found`)
}

/** Removes the entry at the address; 404 when there is none. */
export function removeStorageEntry(tx: Tx, address: StorageAddress, userId: string): Rec {
  const rec = findStorageEntry(tx.state, address, userId)
  if (rec === undefined) throw storageEntryMissing(address)
  tx.del(StorageEntry.type, rec.id)
  return rec
}

/** The entries of a group the user sees (their private ones and every public one), by key, private first. */
export function visibleStorageEntries(state: StateView, group: string, userId: string): Rec[] {
  const visible = [...state.collection(StorageEntry.type).lookup('group', group)].filter((rec) => rec.publicScope === true || rec.owner === userId)
  return visible.sort(compareEntries)
}

function compareEntries(a: Rec, b: Rec): number {
  const keyA = a.itemKey as string
  const keyB = b.itemKey as string
  if (keyA !== keyB) return keyA < keyB ? -1 : 1
  return Number(a.publicScope) - Number(b.publicScope)
}

function storageDescription(address: StorageAddress): string {
  return `${address.scope} storage entry '${address.group}/${address.key}'`
}
