/*
 * A write made with an Idempotency-Key (idempotencyKey.ts): its answer is
 * kept in the very log entry of the write, so a retry answers it again —
 * after a timeout, a lost connection, a crash, a restart, a failover —
 * and writes nothing.
 *
 * The answer is known once the route has rendered it, and the write must
 * not be logged before then; so a keyed call runs as a batch of one
 * (tenants/tenantBatch.ts): it holds its tenant, the route decides on the
 * batch's one Tx, renders its answer, and the answer is put in that
 * same transaction (operations/keptAnswers.ts) before it is committed as
 * ONE entry; the answer leaves once that entry is durable. An answer of
 * 4xx rolls back what the route applied, as a lone request's does, and is
 * kept in an entry of its own; a 5xx is not kept (nothing was decided: a
 * retry runs again). `POST /v1/batch` holds its tenant itself: it is given
 * the keeper (`call.keyed.keep`) and keeps the batch's answer in the
 * batch's entry (one key for the whole batch call; its items' keys are not
 * read). The few calls that cannot run inside a held tenant (a file's
 * upload or removal, `$setUrlPrefix`) refuse a key (400 TL01-1112).
 *
 * Before running, the key is looked up for the caller: a kept answer with
 * the same fingerprint is answered again, with `Idempotent-Replayed: true`;
 * one with another fingerprint is 422 TL01-1113. A second request with the
 * key while the first is still running here is 409 TL01-1114 (the keys in
 * flight are this server's, per tenant; the tenant's requests all come to
 * the node holding it). Calls without the header never come here.
 *
 * The diagnostics channel `timeledger:idempotency:kept` hears each keyed
 * write once it is durable, just before its answer leaves (crash tests kill
 * the server there: test/durability/idempotencyCrash.test.ts).
 */
import diagnosticsChannel from 'node:diagnostics_channel'
import { assert, assertionFailed } from '../assert.js'
import { ApiError } from '../domain/errors.js'
import { keepAnswer, keptAnswerOf, type Answer, type KeptAnswerLimits } from '../domain/operations/keptAnswers.js'
import type { Tx } from '../domain/tx.js'
import { runTenantBatch, type BatchTenant } from '../tenants/tenantBatch.js'
import type { Call } from './call.js'
import { IDEMPOTENCY_KEY_HEADER, REPLAYED_HEADER, requestFingerprint } from './idempotencyKey.js'
import type { ApiResponse } from './response.js'
import { StreamedBody } from './streamedBody.js'

const keptChannel = diagnosticsChannel.channel('timeledger:idempotency:kept')

/** Per tenant actor, the `user NUL key` of the keyed calls running on this server. */
const inFlight = new WeakMap<BatchTenant, Set<string>>()

/** How a keyed call's route runs: its answer, with every failure rendered (never a throw). */
export type KeyedRoute = (call: Call) => Promise<ApiResponse>

/** An answer of 5xx out of the held run: rolls the transaction back whole, then is answered, not kept. */
class ServerFailure extends Error {
  constructor(readonly response: ApiResponse) {
    super('server failure')
  }
}

/** A route's answer as kept: the body as text (a lent buffer is copied), Content-Type, Location and ETag. */
function answerOf(response: ApiResponse): Answer {
  const { body } = response
  if (body instanceof StreamedBody) assertionFailed('a keyed write was answered with a streamed body')
  const header = (name: string): string | null => {
    for (const [headerName, value] of Object.entries(response.headers)) if (headerName.toLowerCase() === name) return value
    return null
  }
  return { status: response.status, contentType: header('content-type'), location: header('location'), etag: header('etag'), body: Buffer.isBuffer(body) ? body.toString('utf8') : body }
}

function replayed(answer: Answer): ApiResponse {
  const headers: Record<string, string> = { [REPLAYED_HEADER]: 'true' }
  if (answer.contentType !== null) headers['Content-Type'] = answer.contentType
  if (answer.location !== null) headers.Location = answer.location
  if (answer.etag !== null) headers.ETag = answer.etag
  return { status: answer.status, headers, body: answer.body }
}

function isServerFailure(response: ApiResponse): boolean {
  return response.error !== undefined && response.error.status >= 500
}

/**
 * Answers a signed-in write made with `key` (see the top). `holdsItself`: the route holds its tenant itself and keeps
 * its answer through `call.keyed.keep` (the batch).
 */
export async function keyedWrite(call: Call, key: string, holdsItself: boolean, route: KeyedRoute): Promise<ApiResponse> {
  const { principal, services } = call
  assert(principal !== null, 'a keyed write without a signed-in caller')
  const actor = services.registry.get(call.tenantName ?? '')
  if (actor === undefined || call.tenant === null) throw new ApiError('TL01-1005', 'writes with an Idempotency-Key are made on a tenant address')
  const limits: KeptAnswerLimits = { lifetimeMs: services.config.idempotencyKeyLifetimeMs, perTenant: services.config.idempotencyKeysPerTenant }
  const slot = `${principal.userId}\u0000${key}`
  let running = inFlight.get(actor)
  if (running?.has(slot) === true) throw new ApiError('TL01-1114', `the first request with this ${IDEMPOTENCY_KEY_HEADER} is still in flight: retry once it is answered`)
  if (running === undefined) {
    running = new Set()
    inFlight.set(actor, running)
  }
  running.add(slot)
  try {
    const fingerprint = requestFingerprint(call.request)
    const kept = await call.tenant.read((state) => keptAnswerOf(state, principal.userId, key, Date.now(), limits.lifetimeMs))
    if (kept !== null) {
      if (kept.fingerprint !== fingerprint) {
        throw new ApiError('TL01-1113', `this ${IDEMPOTENCY_KEY_HEADER} was used for another request (method, path, query or body differ): use a new key for a new request`)
      }
      return replayed(kept)
    }
    let keptOnce = false
    const keep = (tx: Tx, response: ApiResponse): void => {
      keepAnswer(tx, principal.userId, key, fingerprint, answerOf(response), limits)
      keptOnce = true
    }
    const keyedCall: Call = { ...call, keyed: { key, keep } }
    let response: ApiResponse
    if (holdsItself) {
      response = await route(keyedCall)
      // Refused before it held its tenant (a malformed batch): the refusal is kept in a write of its own.
      if (!keptOnce && !isServerFailure(response)) await actor.write((tx) => keep(tx, response))
    } else response = await heldRun(actor, keyedCall, route, keep)
    if (keptChannel.hasSubscribers && keptOnce) keptChannel.publish({ tenant: actor.tenant, key })
    return response
  } finally {
    running.delete(slot)
    if (running.size === 0) inFlight.delete(actor)
  }
}

/** Runs the route as a batch of one (see the top) and keeps its answer in the batch's entry. */
async function heldRun(actor: BatchTenant & { readonly tenant: string }, call: Call, route: KeyedRoute, keep: (tx: Tx, response: ApiResponse) => void): Promise<ApiResponse> {
  try {
    const [response] = await runTenantBatch(actor, {
      transactions: [undefined],
      run: async (_index, access) => {
        const response = await route({ ...call, tenant: access })
        if (isServerFailure(response)) throw new ServerFailure(response)
        return { answer: response, failed: response.error !== undefined }
      },
      notApplied: () => assertionFailed('a keyed write has no transaction group'),
      beforeCommit: (tx, [response]) => keep(tx, response as ApiResponse),
    })
    return response as ApiResponse
  } catch (error) {
    if (error instanceof ServerFailure) return error.response
    throw error
  }
}
