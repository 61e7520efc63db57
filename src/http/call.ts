/*
 * What a handler works with: the services of this server, the request, and
 * — for calls on a tenant URL — the tenant and (once authenticated) the
 * user. `tenant` is the tenant's mailbox as this call may use it: the
 * actor itself for a plain request, or a batch's shared transaction.
 */
import type { Config } from '../config.js'
import type { TenantView, Tx } from '../domain/tx.js'
import type { TenantRegistry } from '../tenants/tenantRegistry.js'
import type { Steps } from '../domain/steps.js'
import type { MaybePromise } from '../maybePromise.js'
import type { Outbox } from '../mail/outbox.js'
import type { AbuseLimits } from './abuseLimits.js'
import type { FeedLimits } from './changes/feedLimits.js'
import type { RequestForwarder } from './forwarding.js'
import type { ApiRequest } from './request.js'
import type { ApiResponse } from './response.js'

export interface Services {
  readonly config: Config
  readonly registry: TenantRegistry
  readonly apiKeys: ReadonlySet<string>
  /** In-memory abuse counters of this server (rateLimiter.ts). */
  readonly limits: AbuseLimits
  /** The change feed's subscriptions open and the budget of bytes waiting for them (changes/feedLimits.ts). */
  readonly feedLimits: FeedLimits
  /** Where mails go once the write that decided them is durable (src/mail/outbox.ts). */
  readonly outbox: Outbox
  /** Cluster mode: sends a request for a tenant another node holds to that node (forwarding.ts); null embedded. */
  readonly forwarder: RequestForwarder | null
}

export interface TenantAccess {
  /** The answer at once when nothing makes it wait (maybePromise.ts), else once what it saw is durable. */
  read<T>(query: (state: TenantView) => T): MaybePromise<T>
  /**
   * A read that may be long (a scan, sort, summary or report), written as steps: run in slices that let the other
   * tenants through, against one state; at once when it ends in its first slice (tenants/slicedRead.ts). 429 when the
   * tenant's heavy-read budget is spent.
   */
  readInSlices<T>(query: (state: TenantView) => Steps<T>): MaybePromise<T>
  /**
   * Reads the current state without waiting for it to be durable: only for
   * decisions (such as checking a token) whose own answer waits anyway —
   * a read's answer behind the read barrier, a write's behind its flush.
   */
  inspect<T>(query: (state: TenantView) => T): MaybePromise<T>
  write<T>(decide: (tx: Tx) => T): Promise<T>
  /**
   * A write too long for one event-loop turn (an import), written as steps: decided in slices while the tenant is
   * held, logged as ONE entry, rolled back whole when a step throws (tenants/slicedWrite.ts).
   */
  writeInSlices<T>(decide: (tx: Tx) => Steps<T>): Promise<T>
}

export interface Principal {
  readonly userId: string
  /** The account owner or an admin: may do everything in the tenant. */
  readonly superuser: boolean
  readonly isOwner: boolean
  readonly tokenId: string
}

/** A call made with an Idempotency-Key (keyedWrite.ts): the key, and how a route that holds its tenant itself keeps its answer. */
interface KeyedCall {
  readonly key: string
  /** Keeps `response` as the key's answer in the write `tx`, before that write is logged (the batch's). */
  keep(tx: Tx, response: ApiResponse): void
}

export interface Call {
  readonly services: Services
  readonly request: ApiRequest
  readonly tenantName: string | null
  readonly tenant: TenantAccess | null
  principal: Principal | null
  /** Set for a write made with an Idempotency-Key (keyedWrite.ts). */
  readonly keyed?: KeyedCall
}
