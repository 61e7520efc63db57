/*
 * The change feed's limits on this node, shared by its listeners (the API
 * listener and a cluster node's internal one): the subscriptions open at
 * once (subscriptionLimits.ts) and the one budget of bytes waiting for all
 * feed streams together (feedBudget.ts), with the figures /metrics shows
 * of them.
 */
import type { Config } from '../../config.js'
import { FeedBudget } from './feedBudget.js'
import { SubscriptionLimits } from './subscriptionLimits.js'

export class FeedLimits {
  readonly subscriptions: SubscriptionLimits
  readonly budget: FeedBudget

  constructor(config: Config) {
    this.subscriptions = new SubscriptionLimits(config)
    this.budget = new FeedBudget(config.changeFeedMaxBufferedBytesPerNode)
  }

  /** Subscriptions holding a place on this node. */
  get open(): number {
    return this.subscriptions.open
  }

  /** Requests for the feed refused at a limit since start. */
  get refused(): number {
    return this.subscriptions.refused
  }

  /** Bytes waiting for all feed streams of this node, as they last told. */
  get bufferedBytes(): number {
    return this.budget.heldBytes
  }

  /** Streams cut by the budget since start. */
  get budgetCuts(): number {
    return this.budget.cuts
  }
}
