/*
 * The key/value text storage over HTTP (domain rules in domain/storage.ts):
 *
 *   POST   /storage/{group}/{key}[/{scope}]   store the body text with its Content-Type
 *   GET    /storage/{group}/{key}[/{scope}]   the text as stored, with the stored content type (an active type,
 *                                             such as HTML or SVG, as an attachment: storedContent.ts)
 *   DELETE /storage/{group}/{key}[/{scope}]   remove the entry (404 when absent)
 *   GET    /storage/{group}                   [{itemKey, publicScope, contentType}] the caller sees
 *
 * A first store answers 201, a replacing one 200, both with {id, version}.
 */
import { storableContentType } from '../../domain/contentType.js'
import {
  checkStorageName,
  DEFAULT_STORAGE_CONTENT_TYPE,
  findStorageEntry,
  putStorageEntry,
  removeStorageEntry as removeEntry,
  storageAddress,
  storageEntryMissing,
  storageText,
  visibleStorageEntries,
  type StorageAddress,
} from '../../domain/storage.js'
import { parsePaging } from '../../query/listQuery.js'
import type { Call } from '../call.js'
import { dataResponse, textResponse, type ApiResponse } from '../response.js'
import { storedContentHeaders } from '../storedContent.js'
import { requireSession } from '../requireSession.js'

type Params = Record<string, string>

function addressOf(params: Params): StorageAddress {
  return storageAddress(params.group ?? '', params.key ?? '', params.scope)
}

export async function writeStorageEntry(call: Call, params: Params): Promise<ApiResponse> {
  const { tenant, principal } = requireSession(call)
  const address = addressOf(params)
  const content = storageText(call.request.body)
  const contentType = storableContentType(call.request.headers.get('content-type'), DEFAULT_STORAGE_CONTENT_TYPE)
  const { rec, created } = await tenant.write((tx) => putStorageEntry(tx, address, principal.userId, contentType, content))
  return dataResponse(call.request, { id: rec.id, version: rec.version }, { root: 'storageEntry' }, created ? 201 : 200)
}

export async function readStorageEntry(call: Call, params: Params): Promise<ApiResponse> {
  const { tenant, principal } = requireSession(call)
  const address = addressOf(params)
  const rec = await tenant.read((state) => findStorageEntry(state, address, principal.userId))
  if (rec === undefined) throw storageEntryMissing(address)
  return textResponse(call.request, rec.content as string, storedContentHeaders(rec.contentType as string))
}

export async function removeStorageEntry(call: Call, params: Params): Promise<ApiResponse> {
  const { tenant, principal } = requireSession(call)
  const address = addressOf(params)
  const rec = await tenant.write((tx) => removeEntry(tx, address, principal.userId))
  return dataResponse(call.request, { id: rec.id, deleted: true }, { root: 'storageEntry' })
}

export async function listStorageGroup(call: Call, params: Params): Promise<ApiResponse> {
  const { tenant, principal } = requireSession(call)
  const group = checkStorageName('group', params.group ?? '')
  const paging = parsePaging(call.request.query)
  const entries = await tenant.read((state) =>
    visibleStorageEntries(state, group, principal.userId)
      .slice(paging.skip, paging.skip + paging.top)
      .map((rec) => ({ itemKey: rec.itemKey, publicScope: rec.publicScope, contentType: rec.contentType })),
  )
  return dataResponse(call.request, entries, { root: 'storage', item: 'entry' })
}
