/*
 * Bill (billing/bills): an invoice to a client. A new bill takes the next
 * number of the account's sequence (Account.docNumberSequence + 1, stored
 * back on the account in the same write) and the creator as author unless
 * the body names one. itemsPrice and totalPrice are derived from live sums
 * of the bill's items and VAT rows (kept by the engine, never rescanned);
 * they are computed when read, so a later change of vatMode shows at once.
 * A bill with vatMode NO_VAT declares no VAT: its VAT rows are kept but
 * add nothing, totalPrice = itemsPrice.
 */
import { roundMoney } from '../pricing.js'
import { declareResource, field, oneOf, type DisplayContext, type Rec } from '../schema.js'
import type { Caller } from '../caller.js'
import type { Tx } from '../tx.js'
import { billItemPrice } from './billItem.js'

function itemsPrice(bill: Rec, context: DisplayContext): number {
  return context.aggregates?.sum('Bill', 'itemsPrice', bill.id) ?? 0
}

function totalPrice(bill: Rec, context: DisplayContext): number {
  if (bill.vatMode === 'NO_VAT') return itemsPrice(bill, context)
  return roundMoney(itemsPrice(bill, context) + (context.aggregates?.sum('Bill', 'vatPrice', bill.id) ?? 0))
}

/** Numbers the bill from the account's sequence and writes the account with the number taken. */
function numberBill(tx: Tx, bill: Rec, creator: Caller | null): Rec {
  const account = tx.state.collection('Account').values().next().value
  if (account === undefined) throw new Error(`tenant ${tx.state.tenant} has no account to number bills in`)
  const docNumber = (typeof account.docNumberSequence === 'number' ? account.docNumberSequence : 0) + 1
  tx.put('Account', { ...account, docNumberSequence: docNumber, version: account.version + 1, updatedAt: tx.now })
  const author = bill.author ?? creator?.userId ?? null
  return { ...bill, docNumber, author }
}

export const Bill = declareResource({
  type: 'Bill',
  path: 'billing/bills',
  description: 'a bill to a client',
  cascades: ['BillItem', 'BillVat'],
  displayName: (rec) => (typeof rec.docNumber === 'number' ? String(rec.docNumber) : ''),
  onCreate: numberBill,
  inner: [
    { name: 'items', childType: 'BillItem', via: 'bill' },
    { name: 'vats', childType: 'BillVat', via: 'bill' },
  ],
  sums: [
    { name: 'itemsPrice', childType: 'BillItem', via: 'bill', value: billItemPrice },
    { name: 'vatPrice', childType: 'BillVat', via: 'bill', value: (vat) => (typeof vat.vatPrice === 'number' ? vat.vatPrice : null) },
  ],
  fields: [
    field.long('docNumber', 'number of the bill, sequential per account', { access: 'READ_ONLY', inStub: true }),
    field.date('docDate', 'date of the bill'),
    field.date('dueDate', 'date the bill is due'),
    field.string('description', 'what the bill is for'),
    field.string('notes', 'free text'),
    field.ref('client', 'Client', 'client the bill is for'),
    field.ref('contactPerson', 'ContactPerson', 'contact person at the client'),
    field.ref('author', 'User', 'who wrote the bill'),
    field.boolean('approved', 'the bill was approved'),
    field.boolean('draft', 'the bill is a draft'),
    field.string('vatMode', 'DECLARE_VAT or NO_VAT', { constraints: [oneOf('DECLARE_VAT', 'NO_VAT')] }),
    field.double('itemsPrice', 'sum of the prices of the items', { access: 'READ_ONLY', derive: itemsPrice }),
    field.double('totalPrice', 'itemsPrice plus the VAT of every VAT row (itemsPrice with vatMode NO_VAT)', { access: 'READ_ONLY', derive: totalPrice }),
  ],
})
