/*
 * Bill (billing/bills): an invoice to a client. A new bill takes the next
 * number of the account's sequence (Account.docNumberSequence + 1, stored
 * back on the account in the same write) and the creator as author unless
 * the body names one. itemsPrice and totalPrice are derived from live sums
 * of the bill's items and VAT rows (kept by the engine, never rescanned);
 * they are computed when read, so a later change of vatMode shows at once.
 * A bill with vatMode NO_VAT declares no VAT: its VAT rows are kept but
 * add nothing, totalPrice = itemsPrice. `items` and `vats` show the inner
 * collections (billing/bills/{id}/items, /vats) on the bill, read-only: the
 * live children, items by docIndex, VAT rows by vatRate; they are written
 * through the inner collections.
 */
import { assertionFailed } from '../../assert.js'
import { roundMoney } from '../pricing.js'
import type { DisplayContext, Rec } from '../schema.js'
import { declareResource, field, oneOf } from '../declare.js'
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

/** The ids of the bill's live children of `childType`, in the order of `orderField` (then id). */
function liveChildren(childType: string, orderField: string): (bill: Rec, context: DisplayContext) => string[] {
  return (bill, context) => {
    const children: Rec[] = []
    for (const child of context.recordsWith?.(childType, 'bill', bill.id) ?? []) if (child.trashItem === null) children.push(child)
    children.sort((a, b) => order(a[orderField], b[orderField]) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    return children.map((child) => child.id)
  }
}

/** Numbers first (missing last). */
function order(a: unknown, b: unknown): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b
  return typeof a === 'number' ? -1 : typeof b === 'number' ? 1 : 0
}

/** Numbers the bill from the account's sequence and writes the account with the number taken. */
function numberBill(tx: Tx, bill: Rec, creator: Caller | null): Rec {
  const account = tx.state.collection('Account').values().next().value
  if (account === undefined) assertionFailed(`tenant ${tx.state.tenant} has no account to number bills in`)
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
  savedWith: ['BillItem', 'BillVat'],
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
    field.date('vatDate', 'date the VAT is due for (date of supply)'),
    field.string('vatText', 'text about the VAT printed on the bill (e.g. why none is declared)'),
    field.date('lastPaymentDate', 'date of the last payment received'),
    field.string('header', 'text printed above the items'),
    field.string('footer', 'text printed below the items'),
    field.string('groupAttributes', 'item attributes the bill groups its items by, free text'),
    field.double('itemsPrice', 'sum of the prices of the items', { access: 'READ_ONLY', derive: itemsPrice }),
    field.refList('items', 'BillItem', 'the items of the bill by docIndex (read-only here: written through billing/bills/{id}/items)', {
      access: 'READ_ONLY',
      derive: liveChildren('BillItem', 'docIndex'),
    }),
    field.refList('vats', 'BillVat', 'the VAT rows of the bill by vatRate (read-only here: written through billing/bills/{id}/vats)', {
      access: 'READ_ONLY',
      derive: liveChildren('BillVat', 'vatRate'),
    }),
    field.double('totalPrice', 'itemsPrice plus the VAT of every VAT row (itemsPrice with vatMode NO_VAT)', { access: 'READ_ONLY', derive: totalPrice }),
  ],
})
