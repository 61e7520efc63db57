/*
 * `POST /v1/batch`: up to 100 requests in one call, answered in order with
 * `{id, code, headers, body}` each.
 *
 * The batch holds its tenant exclusively while it runs and routes every item
 * through the same router as a lone request, with the tenant replaced by the
 * batch's one WriteTx: reads see the batch's earlier writes, writes apply
 * at once under a savepoint. An item that fails is rolled back to its
 * savepoint. Items that share a `transaction` value run together, at the
 * place of the group's first item; if one of them fails, the whole group is
 * rolled back and its other items answer 424 TL01-1108. Whatever remains is
 * logged as ONE entry — one group commit for the whole batch, and a crash
 * can never keep half of a transaction group — and the answers leave once
 * that entry is on disk.
 *
 * An item's own 4xx is its answer; anything else that fails (an item that
 * answers 5xx, an exception on the way) fails the batch whole: the shared
 * transaction is rolled back before the error leaves, so no read ever
 * shows an earlier item's write that was never logged (design §2.3).
 *
 * A long read among the items (a scan, sort, summary or report) runs in
 * slices as it would alone — the other tenants go on between them; this
 * tenant is held by the batch anyway — and spends the tenant's heavy-read
 * budget: once that is used up, such an item answers 429 and the batch goes
 * on with the next.
 */
import { ApiError, wrongParameter } from '../../domain/errors.js'
import { isPlainObject } from '../../domain/input.js'
import { SlicedRead } from '../../tenants/slicedRead.js'
import type { Steps } from '../../engine/steps.js'
import type { TenantActor } from '../../tenants/tenantActor.js'
import type { TenantState } from '../../engine/tenantState.js'
import { WriteTx } from '../../engine/writeTx.js'
import type { Call, TenantAccess } from '../call.js'
import { parseJsonText } from '../body.js'
import { parseQuery, PathError, splitPath, type ApiRequest } from '../request.js'
import { giveBack } from '../../json/answerBuffers.js'
import { dataResponse, plainErrorResponse, type ApiResponse } from '../response.js'
import { route } from '../router.js'

export const MAX_BATCH_ITEMS = 100
const MAX_HEADER_LINES = 64

interface BatchItem {
  id: string
  method: string
  path: string
  headers: string | undefined
  body: string | undefined
  transaction: string | undefined
}

interface ItemAnswer {
  id: string
  code: number
  headers: string
  body: string
}

function optionalString(value: unknown, name: string, index: number): string | undefined {
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'string') throw wrongParameter(`batch item ${index}: '${name}' must be a string`)
  return value
}

function parseItems(call: Call): BatchItem[] {
  const parsed = parseJsonText(call.request.body.toString('utf8'), 'batch body')
  if (!Array.isArray(parsed)) throw wrongParameter('the batch body must be a JSON array of request objects')
  if (parsed.length > MAX_BATCH_ITEMS) throw new ApiError('TL01-9002', `a batch holds at most ${MAX_BATCH_ITEMS} requests, this one has ${parsed.length}`)
  return parsed.map((raw: unknown, index) => {
    if (!isPlainObject(raw)) throw wrongParameter(`batch item ${index} must be an object`)
    const id = optionalString(raw.id, 'id', index)
    const method = optionalString(raw.method, 'method', index)
    const path = optionalString(raw.path, 'path', index)
    if (id === undefined || method === undefined || path === undefined) throw wrongParameter(`batch item ${index} needs id, method and path`)
    return {
      id,
      method: method.toUpperCase(),
      path,
      headers: optionalString(raw.headers, 'headers', index),
      body: typeof raw.body === 'object' && raw.body !== null ? JSON.stringify(raw.body) : optionalString(raw.body, 'body', index),
      transaction: optionalString(raw.transaction, 'transaction', index),
    }
  })
}

function parseHeaderLines(text: string): Map<string, string> {
  const headers = new Map<string, string>()
  for (const line of text.split(/\r?\n/).slice(0, MAX_HEADER_LINES)) {
    const colon = line.indexOf(':')
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim())
  }
  return headers
}

function itemRequest(call: Call, item: BatchItem): ApiRequest {
  const [rawPath = '', queryText = ''] = item.path.split(/\?(.*)/s)
  let split: ReturnType<typeof splitPath>
  try {
    split = splitPath(rawPath)
  } catch (error) {
    throw new ApiError('TL01-9003', error instanceof PathError ? error.message : 'malformed path')
  }
  if (!split.versioned) throw new ApiError('TL01-9003', 'batch item paths start with /v1')
  if (split.segments[0] === 'batch') throw new ApiError('TL01-1103', 'a batch cannot contain another batch')
  const query = parseQuery(queryText)
  const batchToken = call.request.query.get('token')
  if (!query.has('token') && batchToken !== undefined) query.set('token', batchToken)
  const headers = item.headers === undefined ? new Map(call.request.headers) : parseHeaderLines(item.headers)
  headers.delete('content-length')
  return {
    method: item.method,
    segments: split.segments,
    query,
    headers,
    body: Buffer.from(item.body ?? '', 'utf8'),
    tenant: call.request.tenant,
    remoteAddress: call.request.remoteAddress,
    jsonpSuffix: split.jsonpSuffix,
    inBatch: true,
    requestId: call.request.requestId,
  }
}

function answerOf(id: string, response: ApiResponse): ItemAnswer {
  const body = Buffer.isBuffer(response.body) ? response.body.toString('utf8') : response.body
  // A body written into a lent buffer (a list) is copied into the text: the buffer goes back for the next answer.
  giveBack(response.body)
  return {
    id,
    code: response.status,
    headers: Object.entries(response.headers)
      .map(([name, value]) => `${name}: ${value}`)
      .join('\n'),
    body,
  }
}

function failedDependency(item: BatchItem, cause: string): ItemAnswer {
  return answerOf(item.id, plainErrorResponse(new ApiError('TL01-1108', `not applied: item '${cause}' of transaction '${item.transaction}' failed`)))
}

/**
 * The tenant as the batch's items see it: one shared transaction, no waiting. A long read runs in slices as it
 * would alone (the batch holds the tenant across them already) and spends the tenant's heavy-read budget.
 */
function batchAccess(tx: WriteTx, actor: TenantActor): TenantAccess {
  return {
    read: <T>(query: (state: TenantState) => T) => query(tx.state),
    readInSlices: <T>(query: (state: TenantState) => Steps<T>) => {
      const read = new SlicedRead(query(tx.state), actor.heavyReads, actor.sliceMs)
      return read.first() ? read.value : read.rest()
    },
    inspect: <T>(query: (state: TenantState) => T) => query(tx.state),
    write: async <T>(decide: (tx: WriteTx) => T) => {
      const savepoint = tx.savepoint()
      try {
        return decide(tx)
      } catch (error) {
        tx.rollbackTo(savepoint)
        throw error
      }
    },
  }
}

export async function runBatch(call: Call): Promise<ApiResponse> {
  if (call.request.inBatch) throw new ApiError('TL01-1103', 'a batch cannot contain another batch')
  const tenantName = call.tenantName
  const actor = tenantName === null ? undefined : call.services.registry.get(tenantName)
  if (actor === undefined) throw new ApiError('TL01-1005', 'batch calls are made on a tenant address')
  const items = parseItems(call)
  const answers = await actor.exclusive(async () => {
    const tx = new WriteTx(actor.state, Date.now())
    const access = batchAccess(tx, actor)
    const answers = new Map<number, ItemAnswer>()
    const runItem = async (index: number): Promise<ApiResponse> => {
      const item = items[index] as BatchItem
      let request: ApiRequest
      try {
        request = itemRequest(call, item)
      } catch (error) {
        if (!(error instanceof ApiError)) throw error
        // Refused before routing, like a lone request with a bad path: a JSON error body with its Content-Type.
        return plainErrorResponse(error)
      }
      const savepoint = tx.savepoint()
      const response = await route(call.services, request, access)
      // A 5xx is no answer of the item's own: it fails the batch (and rolls all of it back, below).
      if (response.error !== undefined && response.error.status >= 500) throw response.error
      if (response.error !== undefined) tx.rollbackTo(savepoint)
      return response
    }
    try {
      await runItems(items, runItem, answers, tx)
    } catch (error) {
      tx.rollback()
      throw error
    }
    await actor.commit(tx)
    return items.map((_, index) => answers.get(index) as ItemAnswer)
  })
  return dataResponse(call.request, answers, { root: 'batch', item: 'response' })
}

/**
 * Runs the items in order (a transaction group at the place of its first item) and puts each answer in `answers`;
 * a group with a failed item is rolled back to before the group and its other items answer 424.
 */
async function runItems(items: readonly BatchItem[], runItem: (index: number) => Promise<ApiResponse>, answers: Map<number, ItemAnswer>, tx: WriteTx): Promise<void> {
  for (const [index, item] of items.entries()) {
    if (answers.has(index)) continue
    if (item.transaction === undefined) {
      answers.set(index, answerOf(item.id, await runItem(index)))
      continue
    }
    const members = [...items.keys()].filter((other) => items[other]?.transaction === item.transaction)
    const groupSavepoint = tx.savepoint()
    let failedAt: number | null = null
    for (const member of members) {
      const response = await runItem(member)
      answers.set(member, answerOf(items[member]?.id ?? '', response))
      if (response.error !== undefined) {
        failedAt = member
        break
      }
    }
    if (failedAt !== null) {
      tx.rollbackTo(groupSavepoint)
      const cause = items[failedAt]?.id ?? ''
      for (const member of members) if (member !== failedAt) answers.set(member, failedDependency(items[member] as BatchItem, cause))
    }
  }
}
