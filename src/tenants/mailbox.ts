/*
 * A tenant's mailbox: who waits for the tenant while a job holds it.
 *
 * Most work needs the tenant for one synchronous step and never waits here.
 * A job that needs it across awaits (a batch, a long read in slices, a
 * restore's swap, a rename, an eviction's snapshot, loading a resting
 * tenant) holds it; whoever comes meanwhile waits for the job to end, in
 * the order they came, and then tries again.
 *
 * The mailbox is bounded: a request that finds TENANT_MAILBOX_MAX_REQUESTS
 * requests waiting already is refused at once (MailboxFull: 503 with
 * Retry-After), so a burst against one held tenant cannot pile up requests
 * and their bodies in memory without end, while the other tenants go on.
 * A client's request that holds the tenant itself (a batch, a rename) is
 * refused the same way. The tenant layer's own jobs (loading, eviction, a
 * reload after a failed append, an operator's restore) are never refused:
 * there are few of them, and each must run for the tenant to serve again.
 */
import { assert } from '../assert.js'
import { MailboxFull } from './tenantErrors.js'

/** Who waits: a client's request (bounded) or a job of the tenant layer itself (never refused). */
export type Waiter = 'request' | 'tenant'

export class Mailbox {
  /** The hold of the job that has the tenant now, resolved when it ends; null while the tenant is free. */
  private holding: Promise<void> | null = null
  private waitingRequests = 0
  private waitingJobs = 0

  constructor(
    private readonly tenant: string,
    /** TENANT_MAILBOX_MAX_REQUESTS; 0: no limit. */
    private readonly maxWaitingRequests: number,
  ) {}

  /** Whether a job holds the tenant. */
  get held(): boolean {
    return this.holding !== null
  }

  /** Callers waiting for the job that holds the tenant (the mailbox depth). */
  get waiting(): number {
    return this.waitingRequests + this.waitingJobs
  }

  /** Waits until the job holding the tenant ends; a request past the limit is refused (MailboxFull) without waiting. */
  async waitTurn(who: Waiter): Promise<void> {
    assert(this.holding !== null, 'waiting in the mailbox of a free tenant')
    if (who === 'request') {
      if (this.maxWaitingRequests > 0 && this.waitingRequests >= this.maxWaitingRequests) throw new MailboxFull(this.tenant, this.maxWaitingRequests)
      this.waitingRequests += 1
    } else {
      this.waitingJobs += 1
    }
    try {
      await this.holding
    } finally {
      if (who === 'request') this.waitingRequests -= 1
      else this.waitingJobs -= 1
      assert(this.waitingRequests >= 0 && this.waitingJobs >= 0, 'more callers left the mailbox than waited in it')
    }
  }

  /** Takes the tenant now (it must be free) before `job` starts, and gives it back when the job ends. */
  async hold<T>(job: () => Promise<T>): Promise<T> {
    assert(this.holding === null, 'hold while the tenant is held')
    let release!: () => void
    this.holding = new Promise((resolve) => (release = resolve))
    try {
      return await job()
    } finally {
      assert(this.holding !== null, 'the hold ended twice')
      this.holding = null
      release()
    }
  }
}
