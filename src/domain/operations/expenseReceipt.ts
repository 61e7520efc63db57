/*
 * The receipt of an expense: an uploaded file in the slot `receipt` of the
 * Expense (files.ts has the mechanism; Expense.receipt names it). Uploading
 * or removing it changes the expense, so it needs what changing the expense
 * needs: the write permission of expenses (policy.ts: its user, a project
 * manager owning its project, superusers) and the expense outside a locked
 * period unless the caller is a superuser (locks.ts).
 */
import type { Caller } from '../caller.js'
import type { FileSlot } from '../files.js'
import { checkWrite } from '../policy.js'
import { Expense } from '../resources/expense.js'
import type { Rec } from '../schema.js'
import type { StateView } from '../tx.js'
import { checkNotLocked } from './locks.js'

function mayChangeReceipt(state: StateView, caller: Caller, expense: Rec): void {
  checkWrite(caller, Expense, expense, expense, state)
  checkNotLocked(state, caller, Expense, expense, expense)
}

export const RECEIPT: FileSlot = { name: 'receipt', ownerType: 'Expense', selfAlias: null, ownerField: 'receipt', mayChange: mayChangeReceipt }
