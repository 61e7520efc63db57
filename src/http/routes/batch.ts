/*
 * `POST /v1/batch`: up to 100 requests in one call, answered in order with
 * `{id, code, headers, body}` each.
 *
 * This route parses the items, builds each item's request (its path, query,
 * headers and body; the batch's token and `dates` when it names none), routes it
 * through the same router as a lone request (given to the handler by the
 * router, requestRouter.ts) and renders the answers. The transaction is
 * the tenant's (tenants/tenantBatch.ts): the batch holds its tenant
 * exclusively, the items share one transaction, an item that fails is rolled
 * back to its savepoint, a transaction group (items that share a
 * `transaction` value) is rolled back whole when one of its items fails —
 * its other items answer 424 TL01-1108 — and what remains is logged as ONE
 * entry; the answers leave once that entry is on disk.
 *
 * An item's own 4xx is its answer; an item that answers 5xx is no answer
 * of its own: it fails the batch whole (rolled back before the error
 * leaves), as does an exception on the way.
 *
 * A long read among the items runs in slices and spends the tenant's
 * heavy-read budget: once that is used up, such an item answers 429 and the
 * batch goes on with the next.
 */
import { ApiError, wrongParameter } from '../../domain/errors.js'
import { isPlainObject } from '../../domain/input.js'
import { runTenantBatch, type BatchAccess, type BatchItemOutcome } from '../../tenants/tenantBatch.js'
import type { Call } from '../call.js'
import { parseJsonText } from '../body.js'
import { DATES_OPTION } from '../jsonDates.js'
import { parseQuery, PathError, splitPath, type ApiRequest } from '../request.js'
import { giveBack } from '../../json/answerBuffers.js'
import { StreamedBody } from '../streamedBody.js'
import { assertionFailed } from '../../assert.js'
import { dataResponse, plainErrorResponse, type ApiResponse } from '../response.js'
import type { RequestRouter } from '../requestRouter.js'

const MAX_BATCH_ITEMS = 100
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
  // The batch's `dates` (jsonDates.ts) too: its items answer in the form the batch asked for, unless one names its own.
  const batchDates = call.request.query.get(DATES_OPTION)
  if (!query.has(DATES_OPTION) && batchDates !== undefined) query.set(DATES_OPTION, batchDates)
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
    addressPrefix: null,
    rawQuery: '',
    forwarded: call.request.forwarded,
    requestId: call.request.requestId,
  }
}

function answerOf(id: string, response: ApiResponse): ItemAnswer {
  const whole = response.body
  // An export's streamed body never comes here: exports refuse batch items (export/exportAnswer.ts).
  if (whole instanceof StreamedBody) assertionFailed(`batch item '${id}' was answered with a streamed body`)
  const body = Buffer.isBuffer(whole) ? whole.toString('utf8') : whole
  // A body written into a lent buffer (a list) is copied into the text: the buffer goes back for the next answer.
  giveBack(whole)
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

/** Routes one item against the batch's access and renders its answer; an item that answers 5xx fails the batch. */
async function runItem(call: Call, item: BatchItem, access: BatchAccess, routeRequest: RequestRouter): Promise<BatchItemOutcome<ItemAnswer>> {
  let request: ApiRequest
  try {
    request = itemRequest(call, item)
  } catch (error) {
    if (!(error instanceof ApiError)) throw error
    // Refused before routing, like a lone request with a bad path: a JSON error body with its Content-Type.
    return { answer: answerOf(item.id, plainErrorResponse(error)), failed: true }
  }
  const response = await routeRequest(call.services, request, access)
  // A 5xx is no answer of the item's own: it fails the batch (and rolls all of it back, tenantBatch.ts).
  if (response.error !== undefined && response.error.status >= 500) throw response.error
  return { answer: answerOf(item.id, response), failed: response.error !== undefined }
}

export async function runBatch(call: Call, _params: Record<string, string>, routeRequest: RequestRouter): Promise<ApiResponse> {
  if (call.request.inBatch) throw new ApiError('TL01-1103', 'a batch cannot contain another batch')
  const tenantName = call.tenantName
  const actor = tenantName === null ? undefined : call.services.registry.get(tenantName)
  if (actor === undefined) throw new ApiError('TL01-1005', 'batch calls are made on a tenant address')
  const items = parseItems(call)
  const render = (answers: readonly ItemAnswer[]): ApiResponse => dataResponse(call.request, answers, { root: 'batch', item: 'response' })
  const keyed = call.keyed
  let kept: ApiResponse | null = null
  const answers = await runTenantBatch(actor, {
    transactions: items.map((item) => item.transaction),
    run: (index, access) => runItem(call, items[index] as BatchItem, access, routeRequest),
    notApplied: (index, cause) => failedDependency(items[index] as BatchItem, items[cause]?.id ?? ''),
    // With an Idempotency-Key, the batch's answer is kept in the batch's own entry (http/keyedWrite.ts).
    beforeCommit:
      keyed === undefined
        ? undefined
        : (tx, done) => {
            kept = render(done)
            return keyed.keep(tx, kept)
          },
  })
  return kept ?? render(answers)
}
