/*
 * A write in progress. Request handlers decide a write against the current
 * state and express it as primitive operations through put/del; each
 * operation is applied at once (later decisions in the same write see it)
 * and remembered with its inverse. If the handler throws, rollback() undoes
 * every operation in reverse, leaving the state exactly as before; if it
 * succeeds, `ops` is what goes to the log. Savepoints let a batch roll back
 * one transaction group and keep the others.
 */
import type { Rec } from '../domain/schema.js'
import type { Op } from './logEntry.js'
import type { TenantState } from './tenantState.js'

export class WriteTx {
  readonly ops: Op[] = []
  private readonly undo: Op[] = []

  /** `now` is the one timestamp of this write (epoch ms): every createdAt/updatedAt it sets. */
  constructor(readonly state: TenantState, readonly now: number) {}

  put(type: string, rec: Rec): void {
    const op: Op = { op: 'put', type, rec }
    this.undo.push(this.state.applyOp(op))
    this.ops.push(op)
  }

  del(type: string, id: string): void {
    const op: Op = { op: 'del', type, id }
    this.undo.push(this.state.applyOp(op))
    this.ops.push(op)
  }

  /** The records of `type` this write removed, as they were when removed (each `del`'s inverse). */
  removedRecords(type: string): Rec[] {
    const removed: Rec[] = []
    this.ops.forEach((op, index) => {
      const inverse = this.undo[index]
      if (op.op === 'del' && op.type === type && inverse?.op === 'put') removed.push(inverse.rec)
    })
    return removed
  }

  savepoint(): number {
    return this.ops.length
  }

  rollbackTo(savepoint: number): void {
    while (this.ops.length > savepoint) {
      const inverse = this.undo.pop()
      this.ops.pop()
      if (inverse !== undefined) this.state.applyOp(inverse)
    }
  }

  rollback(): void {
    this.rollbackTo(0)
  }
}
