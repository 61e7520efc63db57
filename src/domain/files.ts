/*
 * Uploaded files: a user's signature, the account logo and an expense's
 * receipt, one file each.
 *
 * A file is two things. Its FileMetadata record (name, content type, size)
 * is tenant state: logged, snapshotted, replayed. Its bytes are not: they
 * live in the LMDB `files` table under [tenant, fileKey], outside memory.
 * The write that stores (or removes) the metadata hands the bytes' put (or
 * removal) to its transaction (Tx.storeBeside, removeBeside), and the tenant
 * layer stores them in the commit of the write's log entry, so a crash
 * never separates them and a refused write stores nothing. The metadata id is derived
 * from the slot and the owner, so a new upload replaces the record
 * (version + 1). Each upload's bytes get a key of their own (slot, owner and
 * a content id decided before the write is logged), and the bytes of the
 * version it replaces are removed in the same commit: only the current
 * version's bytes are kept. A restore to a point before a replacement
 * brings back that point's metadata, whose bytes are gone: its download
 * answers 404 rather than another version's bytes under its name and size.
 *
 * Permissions: anyone in the tenant may read; a user changes only their own
 * signature and the account owner changes everyone's (interface.md, an admin
 * included: an admin's rights do not reach the owner's signature); the
 * account owner and admins change the logo. A slot may bring its own rule
 * (`mayChange`: the receipt follows the expense's, operations/expenseReceipt.ts).
 * A slot with an `ownerField` names the file in that field of its owner
 * (Expense.receipt): set by an upload, cleared by a removal, in the same write.
 */
import { findAccount } from './account.js'
import { ApiError, accessDenied, notFound, wrongParameter } from './errors.js'
import { deterministicId } from './hashId.js'
import type { Caller } from './caller.js'
import { changeRecord, insertRecord } from './recordMaking.js'
import { renderRecord, type OutObject } from './render.js'
import { FileMetadata } from './resources/fileMetadata.js'
import { resourceByType } from './resources/index.js'
import type { Rec } from './schema.js'
import type { StateView, Tx } from './tx.js'

export interface FileSlot {
  readonly name: 'signature' | 'logo' | 'receipt'
  readonly ownerType: 'User' | 'Account' | 'Expense'
  /** What `{id}` may say instead of the caller's own user or account id; null: none. */
  readonly selfAlias: string | null
  /** The owner's reference field that names the file's metadata, kept in step; absent: none. */
  readonly ownerField?: string
  /** 403 unless the caller may upload or remove the owner's file; absent: the rule of signatures and logos. */
  readonly mayChange?: (state: StateView, caller: Caller, owner: Rec) => void
}

export const SIGNATURE: FileSlot = { name: 'signature', ownerType: 'User', selfAlias: '@self' }
export const LOGO: FileSlot = { name: 'logo', ownerType: 'Account', selfAlias: '@own' }

const MAX_FILE_NAME_LENGTH = 255
// biome-ignore lint/suspicious/noControlCharactersInRegex: a file name holding a control character is refused, so the pattern names them
const UNSAFE_FILE_NAME = /[\x00-\x1f\x7f/\\]/
const METADATA_FIELDS = ['id', 'version', 'fileName', 'contentType', 'contentSize', 'createdAt', 'updatedAt', 'displayName'] as const

export interface FileValues {
  fileName: string
  contentType: string
  bytes: Uint8Array
}

/** The key of one upload's bytes; `contentId` is new for every upload. */
function fileKeyOf(slot: FileSlot, ownerId: string, contentId: string): string {
  return `${slot.name}/${ownerId}/${contentId}`
}

function fileMetadataId(slot: FileSlot, ownerId: string): string {
  return deterministicId('file', slot.name, ownerId)
}

/** The object a file path names (`{id}` or the alias): 404 unless it exists and is not in the trash. */
export function resolveFileOwner(state: StateView, slot: FileSlot, idParam: string, callerId: string): Rec {
  if (slot.ownerType === 'Account') {
    const account = findAccount(state)
    if (account === undefined || (idParam !== slot.selfAlias && idParam !== account.id)) throw notFound('Account', idParam)
    return account
  }
  const id = idParam === slot.selfAlias ? callerId : idParam
  const owner = state.get(slot.ownerType, id)
  if (owner === undefined || owner.trashItem !== null) throw notFound(slot.ownerType, id)
  return owner
}

/** 403 unless the caller may upload or remove this file. */
function checkFileChange(state: StateView, caller: Caller, slot: FileSlot, owner: Rec): void {
  const ownerId = owner.id
  if (slot.mayChange !== undefined) {
    slot.mayChange(state, caller, owner)
    return
  }
  if (slot.ownerType === 'Account') {
    if (caller.superuser) return
    throw accessDenied('only the account owner and admins may change the logo')
  }
  if (ownerId === caller.userId || findAccount(state)?.owner === caller.userId) return
  throw accessDenied('only the account owner may change the signature of another user')
}

/** The `filename` query parameter: required, at most 255 characters, no path separators or control characters. */
export function checkFileName(text: string | undefined): string {
  if (text === undefined || text.trim() === '') throw wrongParameter('the query parameter filename is required')
  if (text.length > MAX_FILE_NAME_LENGTH) throw wrongParameter(`filename may have at most ${MAX_FILE_NAME_LENGTH} characters`)
  if (UNSAFE_FILE_NAME.test(text)) throw wrongParameter('filename may not contain /, \\ or control characters')
  return text
}

/** 413 TL01-1109 above the limit; an empty upload is refused (400). */
export function checkFileSize(bytes: number, limitBytes: number): void {
  if (bytes > limitBytes) throw new ApiError('TL01-1109', `a file may have at most ${limitBytes} bytes, this one has ${bytes}`)
  if (bytes === 0) throw wrongParameter('the upload is empty')
}

export function findFileMetadata(state: StateView, slot: FileSlot, ownerId: string): Rec | undefined {
  return state.get(FileMetadata.type, fileMetadataId(slot, ownerId))
}

/** 404 naming the owner when it has no file in this slot. */
export function noFile(slot: FileSlot, ownerId: string): ApiError {
  return new ApiError('TL01-1101', `${slot.ownerType} '${ownerId}' has no ${slot.name}`)
}

/** What an upload stored: the metadata, and whether it is new. */
export interface UploadedFile {
  readonly rec: Rec
  readonly created: boolean
}

/**
 * An upload by the caller to the file the path names (`idParam`: an id or the slot's alias): stores (or replaces)
 * the metadata of the owner's file, and its bytes under a new key made from `contentId`; the bytes of the upload it
 * replaces are removed.
 */
export function uploadFile(tx: Tx, caller: Caller, slot: FileSlot, idParam: string, values: FileValues, contentId: string): UploadedFile {
  const owner = resolveFileOwner(tx.state, slot, idParam, caller.userId)
  checkFileChange(tx.state, caller, slot, owner)
  const uploaded = putFileMetadata(tx, slot, owner.id, values, contentId)
  nameFileInOwner(tx, slot, owner, uploaded.rec.id)
  return uploaded
}

/** Keeps the owner's `ownerField` naming its file (or null once removed). */
function nameFileInOwner(tx: Tx, slot: FileSlot, owner: Rec, fileId: string | null): void {
  if (slot.ownerField === undefined || owner[slot.ownerField] === fileId) return
  changeRecord(tx, resourceByType(slot.ownerType), owner, { [slot.ownerField]: fileId })
}

/** Removes the caller's (or with the right, another owner's) file the path names; 404 when there is none. */
export function removeFile(tx: Tx, caller: Caller, slot: FileSlot, idParam: string): Rec {
  const owner = resolveFileOwner(tx.state, slot, idParam, caller.userId)
  checkFileChange(tx.state, caller, slot, owner)
  const rec = findFileMetadata(tx.state, slot, owner.id)
  if (rec === undefined) throw noFile(slot, owner.id)
  tx.del(FileMetadata.type, rec.id)
  tx.removeBeside(rec.fileKey as string)
  nameFileInOwner(tx, slot, owner, null)
  return rec
}

/** Stores (or replaces) the metadata of the owner's file and hands its bytes (and the removal of those it replaces) to the write. */
function putFileMetadata(tx: Tx, slot: FileSlot, ownerId: string, { bytes, ...named }: FileValues, contentId: string): UploadedFile {
  const fileKey = fileKeyOf(slot, ownerId, contentId)
  // Refused here, before anything is put, when the store has no room for the bytes.
  tx.storeBeside(fileKey, bytes)
  const values = { ...named, contentSize: bytes.length, fileKey }
  const before = findFileMetadata(tx.state, slot, ownerId)
  if (before !== undefined) {
    if (before.fileKey !== fileKey) tx.removeBeside(before.fileKey as string)
    return { rec: changeRecord(tx, FileMetadata, before, values), created: false }
  }
  const rec = insertRecord(tx, FileMetadata, {
    ...values,
    id: fileMetadataId(slot, ownerId),
    ownerType: slot.ownerType,
    ownerId,
    slot: slot.name,
  })
  return { rec, created: true }
}

/** The FileMetadata object clients see: {id, version, fileName, contentType, contentSize, createdAt, updatedAt, displayName}. */
export function renderFileMetadata(rec: Rec, state: StateView): OutObject {
  const full = renderRecord(FileMetadata, rec, state, { noExpand: true })
  const out: OutObject = {}
  for (const name of METADATA_FIELDS) out[name] = full[name]
  return out
}

/** `attachment; filename="…"`, with an RFC 5987 `filename*` when the name is not plain ASCII. */
export function contentDisposition(fileName: string): string {
  const fallback = fileName.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, (char) => `\\${char}`)
  const header = `attachment; filename="${fallback}"`
  if (/^[\x20-\x7e]*$/.test(fileName)) return header
  const encoded = encodeURIComponent(fileName).replace(/['()*]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`)
  return `${header}; filename*=UTF-8''${encoded}`
}
