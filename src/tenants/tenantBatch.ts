/*
 * A batch on one tenant: many requests run as one write of the tenant, the
 * transaction mechanism behind `POST /v1/batch` (http/routes/batch.ts,
 * which parses the items, routes each one and renders the answers).
 *
 * The batch holds its tenant exclusively while it runs (the actor's
 * mailbox waits) and gives every item the same access to the tenant
 * (BatchAccess): the batch's ONE WriteTx instead of the actor, so reads see
 * the batch's earlier writes and writes apply at once under a savepoint.
 * Each item runs under a savepoint of its own: an item that fails with an
 * answer of its own (a 4xx) is rolled back to it. Items that share a
 * `transaction` value run together, at the place of the group's first
 * item; if one of them fails, the whole group is rolled back to before it
 * and its other items are not applied (the route answers them 424
 * TL01-1108). Whatever remains — with what the caller adds once it has
 * every answer (`beforeCommit`: an answer kept for an Idempotency-Key) —
 * is committed as ONE log entry — one group
 * commit for the whole batch, and a crash can never keep half of a
 * transaction group — and the answers are released once it is on disk.
 *
 * An item whose run throws (the route throws for an item that answers 5xx,
 * or an exception on the way) fails the batch whole: the shared transaction
 * is rolled back before the error leaves, so no read ever shows an earlier
 * item's write that was never logged (ARCHITECTURE.md §2.3).
 *
 * A long read among the items (a scan, sort, summary or report) runs in
 * slices as it would alone — the other tenants go on between them; this
 * tenant is held by the batch anyway — and spends the tenant's heavy-read
 * budget.
 */
import { SlicedRead } from './slicedRead.js'
import { decideInSlices } from './slicedWrite.js'
import type { Steps } from '../engine/steps.js'
import type { TenantActor } from './tenantActor.js'
import type { TenantState } from '../engine/tenantState.js'
import { WriteTx } from '../engine/writeTx.js'
import type { MaybePromise } from '../maybePromise.js'

/** What a batch needs of its tenant's actor: the mailbox's exclusive hold, the state, the commit, the read budget. */
export type BatchTenant = Pick<TenantActor, 'state' | 'exclusive' | 'commit' | 'heavyReads' | 'sliceMs'>

/**
 * The tenant as a batch's items see it (the shape of http/call.ts's TenantAccess, like the actor's): one shared
 * transaction, no waiting. A long read runs in slices as it would alone (the batch holds the tenant across them
 * already) and spends the tenant's heavy-read budget.
 */
export class BatchAccess {
  constructor(
    private readonly tx: WriteTx,
    private readonly actor: BatchTenant,
  ) {}

  read<T>(query: (state: TenantState) => T): MaybePromise<T> {
    return query(this.tx.state)
  }

  readInSlices<T>(query: (state: TenantState) => Steps<T>): MaybePromise<T> {
    const read = new SlicedRead(query(this.tx.state), this.actor.heavyReads, this.actor.sliceMs)
    return read.first() ? read.value : read.rest()
  }

  inspect<T>(query: (state: TenantState) => T): MaybePromise<T> {
    return query(this.tx.state)
  }

  /** Applies a write at once under a savepoint: rolled back alone if it throws, logged with the batch otherwise. */
  async write<T>(decide: (tx: WriteTx) => T): Promise<T> {
    const savepoint = this.tx.savepoint()
    try {
      return decide(this.tx)
    } catch (error) {
      this.tx.rollbackTo(savepoint)
      throw error
    }
  }

  /** A write in slices (slicedWrite.ts) on the batch's transaction, under a savepoint like `write`. */
  async writeInSlices<T>(decide: (tx: WriteTx) => Steps<T>): Promise<T> {
    return decideInSlices(this.tx, this.tx.savepoint(), decide(this.tx), this.actor.sliceMs)
  }
}

/** What one item's run gives the batch: its answer, rendered, and whether it failed with an answer of its own. */
export interface BatchItemOutcome<Answer> {
  readonly answer: Answer
  readonly failed: boolean
}

/** The items of a batch as the tenant runs them; the answers are the caller's (rendered by its callbacks). */
export interface BatchItems<Answer> {
  /** Per item, in order, the transaction group it belongs to (undefined: none). */
  readonly transactions: readonly (string | undefined)[]
  /** Runs item `index` against the batch's access; a throw fails the whole batch. */
  run(index: number, access: BatchAccess): Promise<BatchItemOutcome<Answer>>
  /** The answer of group member `index`, not applied because member `cause` of its group failed. */
  notApplied(index: number, cause: number): Answer
  /**
   * Called with the answers once every item ran, before the batch's entry is logged: what it writes on `tx` goes
   * into that entry (the batch's answer kept for its Idempotency-Key, http/keyedWrite.ts). A throw fails the batch.
   */
  beforeCommit?(tx: WriteTx, answers: readonly Answer[]): void
}

/**
 * Runs a batch on the tenant (see the top) and resolves with the items' answers in their order, once the batch's
 * log entry is on disk; rejects, with the batch rolled back whole, when an item's run throws.
 */
export async function runTenantBatch<Answer>(actor: BatchTenant, items: BatchItems<Answer>): Promise<Answer[]> {
  // A request: refused while the tenant's mailbox is full (mailbox.ts).
  return actor.exclusive(async () => {
    const tx = new WriteTx(actor.state, Date.now())
    const access = new BatchAccess(tx, actor)
    const answers = new Map<number, Answer>()
    const runItem = async (index: number): Promise<BatchItemOutcome<Answer>> => {
      const savepoint = tx.savepoint()
      const outcome = await items.run(index, access)
      if (outcome.failed) tx.rollbackTo(savepoint)
      return outcome
    }
    let ordered: Answer[]
    try {
      await runInOrder(items, runItem, answers, tx)
      ordered = items.transactions.map((_, index) => answers.get(index) as Answer)
      items.beforeCommit?.(tx, ordered)
    } catch (error) {
      tx.rollback()
      throw error
    }
    await actor.commit(tx)
    return ordered
  }, 'request')
}

/**
 * Runs the items in order (a transaction group at the place of its first item) and puts each answer in `answers`;
 * a group with a failed item is rolled back to before the group and its other items are not applied.
 */
async function runInOrder<Answer>(items: BatchItems<Answer>, runItem: (index: number) => Promise<BatchItemOutcome<Answer>>, answers: Map<number, Answer>, tx: WriteTx): Promise<void> {
  const { transactions } = items
  for (const [index, transaction] of transactions.entries()) {
    if (answers.has(index)) continue
    if (transaction === undefined) {
      answers.set(index, (await runItem(index)).answer)
      continue
    }
    const members = [...transactions.keys()].filter((other) => transactions[other] === transaction)
    const groupSavepoint = tx.savepoint()
    let failedAt: number | null = null
    for (const member of members) {
      const outcome = await runItem(member)
      answers.set(member, outcome.answer)
      if (outcome.failed) {
        failedAt = member
        break
      }
    }
    if (failedAt !== null) {
      tx.rollbackTo(groupSavepoint)
      for (const member of members) if (member !== failedAt) answers.set(member, items.notApplied(member, failedAt))
    }
  }
}
