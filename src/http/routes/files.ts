/*
 * Uploaded files over HTTP (domain rules in domain/files.ts), for each slot
 * (users/{id}/signature with @self, accounts/{id}/logo with @own,
 * time/expenses/{id}/receipt):
 *
 *   POST   …/upload?filename=<name>   store the body with its Content-Type (201 new, 200 replaced: {id, version})
 *   GET    …/download                 the bytes, stored content type, Content-Disposition: attachment,
 *                                     Content-Security-Policy: sandbox (storedContent.ts)
 *   GET    …                          the FileMetadata object
 *   DELETE …                          remove the file (404 when there is none)
 *
 * Writes: the metadata is decided in the tenant's write, which hands the
 * bytes to put (or remove) to its transaction; the tenant layer stores them
 * in the commit of the write's log entry (domain/files.ts). Uploads and
 * removals are refused inside a batch (whose items wait for the batch's one
 * commit, holding their bodies meanwhile) and with an Idempotency-Key.
 *
 * Download: the metadata is read (durable), then the bytes; a second look
 * finding the very same metadata record proves no replacement slipped in
 * between, else the pair is read again.
 */
import { storableContentType } from '../../domain/contentType.js'
import { ApiError } from '../../domain/errors.js'
import { checkFileName, checkFileSize, contentDisposition, findFileMetadata, noFile, removeFile, renderFileMetadata, resolveFileOwner, uploadFile, type FileSlot } from '../../domain/files.js'
import { newId } from '../../domain/recordMaking.js'
import { FileMetadata } from '../../domain/resources/fileMetadata.js'
import type { Rec } from '../../domain/schema.js'
import type { TenantView } from '../../domain/tx.js'
import type { Call, Principal, TenantAccess } from '../call.js'
import { queryFlag } from '../request.js'
import { dataResponse, type ApiResponse } from '../response.js'
import { storedContentHeaders } from '../storedContent.js'
import { accessTokenRequired, requireSession } from '../requireSession.js'

type Params = Record<string, string>
type FileHandler = (call: Call, params: Params) => Promise<ApiResponse>

const DEFAULT_FILE_CONTENT_TYPE = 'application/octet-stream'
const DOWNLOAD_ATTEMPTS = 5

interface FileCall {
  tenant: TenantAccess
  principal: Principal
  tenantName: string
}

function fileCall(call: Call): FileCall {
  const { tenant, principal } = requireSession(call)
  if (call.tenantName === null) throw accessTokenRequired()
  return { tenant, principal, tenantName: call.tenantName }
}

function refuseInBatch(call: Call, slot: FileSlot): void {
  if (call.request.inBatch) throw new ApiError('TL01-1103', `a ${slot.name} cannot be uploaded or removed inside a batch`)
  // A keyed write holds its tenant as a batch does (http/keyedWrite.ts), and its bytes are stored beside the log.
  if (call.keyed !== undefined) throw new ApiError('TL01-1112', `a ${slot.name} is uploaded or removed without an Idempotency-Key`)
}

function metadataOf(state: TenantView, slot: FileSlot, params: Params, callerId: string): Rec {
  const owner = resolveFileOwner(state, slot, params.id ?? '', callerId)
  const rec = findFileMetadata(state, slot, owner.id)
  if (rec === undefined) throw noFile(slot, owner.id)
  return rec
}

function upload(slot: FileSlot): FileHandler {
  return async (call, params) => {
    const { tenant, principal } = fileCall(call)
    refuseInBatch(call, slot)
    const bytes = call.request.body
    checkFileSize(bytes.length, call.services.config.maxFileBytes)
    const fileName = checkFileName(call.request.query.get('filename'))
    const contentType = storableContentType(call.request.headers.get('content-type'), DEFAULT_FILE_CONTENT_TYPE)
    // Decided before the write, so the logged record carries it (replay is deterministic).
    const contentId = newId()
    const { rec, created } = await tenant.write((tx) => uploadFile(tx, principal, slot, params.id ?? '', { fileName, contentType, bytes }, contentId))
    const status = created ? 201 : 200
    if (!queryFlag(call.request, 'response_object')) return dataResponse(call.request, { id: rec.id, version: rec.version }, { root: 'fileMetadata' }, status)
    return tenant.read((state) => dataResponse(call.request, renderFileMetadata(rec, state), { root: 'fileMetadata' }, status))
  }
}

function remove(slot: FileSlot): FileHandler {
  return async (call, params) => {
    const { tenant, principal } = fileCall(call)
    refuseInBatch(call, slot)
    const rec = await tenant.write((tx) => removeFile(tx, principal, slot, params.id ?? ''))
    return dataResponse(call.request, { id: rec.id, deleted: true }, { root: 'fileMetadata' })
  }
}

function metadata(slot: FileSlot): FileHandler {
  return async (call, params) => {
    const { tenant, principal } = fileCall(call)
    return tenant.read((state) => {
      const rec = metadataOf(state, slot, params, principal.userId)
      return dataResponse(call.request, renderFileMetadata(rec, state), { root: 'fileMetadata' })
    })
  }
}

function download(slot: FileSlot): FileHandler {
  return async (call, params) => {
    const { tenant, principal, tenantName } = fileCall(call)
    const { beside } = call.services.registry
    for (let attempt = 1; ; attempt += 1) {
      const rec = await tenant.read((state) => metadataOf(state, slot, params, principal.userId))
      const bytes = await beside.fileBytes(tenantName, rec.fileKey as string)
      // Every change raises a record's version: the same version and key mean the same upload.
      const unchanged = await tenant.read((state) => {
        const now = state.get(FileMetadata.type, rec.id)
        return now?.version === rec.version && now.fileKey === rec.fileKey
      })
      if (!unchanged && attempt < DOWNLOAD_ATTEMPTS) continue
      if (bytes === undefined) {
        throw new ApiError(
          'TL01-1101',
          `the content of ${slot.name} '${rec.fileName as string}' is no longer kept (it was replaced or removed after the point this tenant was restored to); upload it again`,
        )
      }
      return fileResponse(rec, bytes)
    }
  }
}

function fileResponse(rec: Rec, bytes: Buffer): ApiResponse {
  const headers = storedContentHeaders(rec.contentType as string, contentDisposition(rec.fileName as string))
  // uWS writes Content-Length itself from the body; a second one would break clients.
  return { status: 200, headers, body: bytes }
}

/** The four handlers of one slot, for the route table. */
export function fileHandlers(slot: FileSlot): { upload: FileHandler; download: FileHandler; metadata: FileHandler; remove: FileHandler } {
  return { upload: upload(slot), download: download(slot), metadata: metadata(slot), remove: remove(slot) }
}
