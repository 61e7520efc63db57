/*
 * Fields a write derives from the record about to be stored, decided by the
 * caller of a create or update (a write option such as calculate_price, or
 * $updateprice): a function of that record and the state, whose values are
 * stored with the others.
 */
import type { Rec } from './record.js'
import type { StateView } from './tx.js'

export type DeriveFields = (rec: Rec, state: StateView) => Record<string, unknown>
