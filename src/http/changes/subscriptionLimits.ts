/*
 * How many change feed subscriptions may be open at once: per user of a
 * tenant, per tenant and on this node (CHANGE_FEED_MAX_SUBSCRIPTIONS_PER_USER,
 * _PER_TENANT, _PER_NODE; 0: no limit). Each WebSocket or event stream is
 * one, a resume like any other. A request for the feed takes its place in
 * all three when the route accepts it (routes/changes.ts), in the same turn
 * as the check, so that parallel requests cannot all pass it; past a limit
 * it is refused 429 TL01-9010 with Retry-After, before the upgrade or the
 * event stream starts. The place is given back when the stream ends, from
 * either side; a place whose stream never started (the client went away
 * before the upgrade, or the upgrade was not made) is given back after
 * UNSTARTED_MS. A feed forwarded to the node holding the tenant (cluster
 * mode) takes its place there, where the subscription is.
 */
import type { Config } from '../../config.js'
import { tooManyRequests } from '../tooManyRequests.js'

/** How long a place waits for its stream to start before it is given back. */
const UNSTARTED_MS = 10_000
/** The Retry-After of a refusal: places come free only as streams end, which nothing predicts. */
const RETRY_AFTER_MS = 30_000

/** One subscription's place, taken by `SubscriptionLimits.take`. */
export interface SubscriptionPlace {
  /** The stream started: the place is held until `release`. */
  started(): void
  /** The stream ended (or will never start): the place is given back (once, however often called). */
  release(): void
}

export class SubscriptionLimits {
  private readonly perUser = new Map<string, number>()
  private readonly perTenant = new Map<string, number>()
  private total = 0
  /** Requests refused at a limit since start (/metrics). */
  refused = 0

  constructor(
    private readonly config: Pick<Config, 'changeFeedMaxSubscriptionsPerUser' | 'changeFeedMaxSubscriptionsPerTenant' | 'changeFeedMaxSubscriptionsPerNode'>,
    private readonly unstartedMs = UNSTARTED_MS,
  ) {}

  /** Subscriptions holding a place on this node (/metrics). */
  get open(): number {
    return this.total
  }

  /** Takes a place for a subscription of `userId` in `tenant`; 429 TL01-9010 when one of the limits is reached. */
  take(tenant: string, userId: string): SubscriptionPlace {
    const { changeFeedMaxSubscriptionsPerUser: perUser, changeFeedMaxSubscriptionsPerTenant: perTenant, changeFeedMaxSubscriptionsPerNode: perNode } = this.config
    const userKey = `${tenant}\u0000${userId}`
    if (perUser > 0 && (this.perUser.get(userKey) ?? 0) >= perUser) {
      this.refused += 1
      throw tooManyRequests(RETRY_AFTER_MS, `this user has ${perUser} change feed subscriptions open (CHANGE_FEED_MAX_SUBSCRIPTIONS_PER_USER): close one first`)
    }
    if (perTenant > 0 && (this.perTenant.get(tenant) ?? 0) >= perTenant) {
      this.refused += 1
      throw tooManyRequests(RETRY_AFTER_MS, `this account has ${perTenant} change feed subscriptions open (CHANGE_FEED_MAX_SUBSCRIPTIONS_PER_TENANT)`)
    }
    if (perNode > 0 && this.total >= perNode) {
      this.refused += 1
      throw tooManyRequests(RETRY_AFTER_MS, `the server has ${perNode} change feed subscriptions open (CHANGE_FEED_MAX_SUBSCRIPTIONS_PER_NODE)`)
    }
    add(this.perUser, userKey, 1)
    add(this.perTenant, tenant, 1)
    this.total += 1
    let held = true
    const release = () => {
      if (!held) return
      held = false
      clearTimeout(unstarted)
      add(this.perUser, userKey, -1)
      add(this.perTenant, tenant, -1)
      this.total -= 1
    }
    const unstarted = setTimeout(release, this.unstartedMs)
    unstarted.unref()
    return { started: () => clearTimeout(unstarted), release }
  }
}

function add(counts: Map<string, number>, key: string, by: number): void {
  const count = (counts.get(key) ?? 0) + by
  if (count > 0) counts.set(key, count)
  else counts.delete(key)
}
