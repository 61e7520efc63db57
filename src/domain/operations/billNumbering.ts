/*
 * Bill numbering: `billing/bills/$getNextDocNumber`,
 * `$getNextDocNumberPart` and `$setNextDocNumberPart`.
 *
 * The counter is the account's `docNumberSequence`, the last number given:
 * a new bill takes sequence + 1 and stores it back in the same write
 * (resources/bill.ts). A bill's `docNumber` here is that number and nothing
 * else (no prefix or year), so the next document number and its sequential
 * part are the same value. Setting the next part writes sequence = part − 1
 * on the account as any change of it is written: one logged write, so the
 * counter survives a restart and replays exactly. Only the owner and admins
 * set it (bills are theirs to change); the part is an integer from 1 to
 * MAX_DOC_NUMBER and must be above every number a bill still has (live or
 * in the trash), so no two bills can ever share a number.
 */
import { accountOf } from '../account.js'
import type { Caller } from '../caller.js'
import { accessDenied, violation } from '../errors.js'
import type { Rec } from '../record.js'
import type { StateView, Tx } from '../tx.js'

/** The highest number the counter may be set to (twelve digits: far above any real sequence, exact in a double). */
export const MAX_DOC_NUMBER = 999_999_999_999

/** What the three calls answer: the number the next bill will get, whole and as its sequential part. */
export interface NextDocNumber {
  docNumber: number
  docNumberPart: number
}

function lastGiven(account: Rec): number {
  return typeof account.docNumberSequence === 'number' ? account.docNumberSequence : 0
}

export function nextDocNumber(state: StateView): NextDocNumber {
  const next = lastGiven(accountOf(state)) + 1
  return { docNumber: next, docNumberPart: next }
}

/** The highest docNumber of any bill, in the trash too (0 without bills). */
function highestBillNumber(state: StateView): number {
  let highest = 0
  for (const bill of state.collection('Bill').values()) {
    if (typeof bill.docNumber === 'number' && bill.docNumber > highest) highest = bill.docNumber
  }
  return highest
}

function refused(message: string) {
  return violation([{ entityType: 'Bill', field: 'docNumberPart', constraint: 'NextDocNumberPart', message: `Bill.docNumberPart ${message}` }])
}

/** Makes `part` the number of the next bill. */
export function setNextDocNumberPart(tx: Tx, caller: Caller, part: number): NextDocNumber {
  if (!caller.superuser) throw accessDenied('only the account owner and admins set the next bill number')
  if (!Number.isSafeInteger(part) || part < 1 || part > MAX_DOC_NUMBER) throw refused(`the next bill number must be an integer from 1 to ${MAX_DOC_NUMBER} (it is ${part})`)
  const highest = highestBillNumber(tx.state)
  if (part <= highest) throw refused(`the next bill number must be above ${highest}, the highest number a bill has (it is ${part})`)
  const account = accountOf(tx.state)
  if (lastGiven(account) !== part - 1) tx.put('Account', { ...account, docNumberSequence: part - 1, version: account.version + 1, updatedAt: tx.now })
  return { docNumber: part, docNumberPart: part }
}
