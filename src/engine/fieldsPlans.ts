/*
 * How a record logged as its field names and values (engine/logEntry.ts,
 * codec.ts) is written into a table's columns without making the record
 * (ColumnTable.insertNewFields, replaying the log): per column, the position
 * of its value among the entry's, or -1 where the entry lacks the field
 * (the declaration's default goes there, as recordFromFields gives it).
 * The codec hands out one array per list of names it reads, so a plan is
 * worked out once per list and kept by that array (a WeakMap: a list the
 * codec lets go of takes its plan with it).
 */

/** insertNewFields: the entry's fields are not the declaration's own (make the record and insertNew it). */
export const NOT_AS_FIELDS = -2

/** Per column, where its value is among the entry's (-1: absent); null when the entry names a field the declaration does not have, or one field twice. */
export type FieldsPlan = Int32Array | null

export class FieldsPlans {
  private readonly plans = new WeakMap<readonly string[], FieldsPlan>()

  /** `columnAt`: the table's column of each declared field name. */
  constructor(private readonly columnAt: ReadonlyMap<string, number>) {}

  of(names: readonly string[]): FieldsPlan {
    let plan = this.plans.get(names)
    if (plan === undefined) {
      const positions = new Int32Array(this.columnAt.size).fill(-1)
      plan = positions
      for (const [position, name] of names.entries()) {
        const at = this.columnAt.get(name)
        if (at === undefined || positions[at] !== -1) {
          plan = null
          break
        }
        positions[at] = position
      }
      this.plans.set(names, plan)
    }
    return plan
  }
}
