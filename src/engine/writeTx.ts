/*
 * A write in progress. Request handlers decide a write against the current
 * state and express it as primitive operations through put/del; each
 * operation is applied at once (later decisions in the same write see it)
 * and remembered with its inverse. If the handler throws, rollback() undoes
 * every operation in reverse, leaving the state exactly as before; if it
 * succeeds, `ops` is what goes to the log. Savepoints let a batch roll back
 * one transaction group and keep the others. Bytes the write stores outside
 * the log (an upload's) are declared with storeBeside before they are put,
 * so a store without room for them refuses the write first.
 */
import type { Rec } from '../domain/schema.js'
import type { Tx } from '../domain/tx.js'
import type { Op } from './logEntry.js'
import type { TenantState } from './tenantState.js'

export class WriteTx implements Tx {
  readonly ops: Op[] = []
  private readonly undo: Op[] = []
  /** Bytes this write stores beside its log entry (storeBeside). */
  storedBytes = 0

  /**
   * `now` is the one timestamp of this write (epoch ms): every createdAt/updatedAt it sets. `checkRoom` throws when
   * the store has no room for that many bytes (the actor's; a batch, which stores nothing beside its entries, has none).
   */
  constructor(
    readonly state: TenantState,
    readonly now: number,
    private readonly checkRoom: (bytes: number) => void = () => undefined,
  ) {}

  /**
   * Declares bytes the write puts in the store beside its log entry (an uploaded file's), before it puts them:
   * refused (thrown, and the write rolled back) when they do not fit under LMDB_MAP_SIZE_BYTES.
   */
  storeBeside(bytes: number): void {
    this.checkRoom(bytes)
    this.storedBytes += bytes
  }

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

  /** The records of `type` this write removed or replaced, as they were before (each such `del`'s or `put`'s inverse). */
  previousRecords(type: string): Rec[] {
    const previous: Rec[] = []
    this.ops.forEach((op, index) => {
      const inverse = this.undo[index]
      if (op.type === type && inverse?.op === 'put') previous.push(inverse.rec)
    })
    return previous
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
