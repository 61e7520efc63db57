/*
 * BillItem (billing/billitems; inner collection billing/bills/{id}/items):
 * a line of a bill. `price` is derived: unitPrice × quantity, rounded to 2
 * decimals half away from zero; the bill's live sums add it up.
 */
import { roundMoney } from '../pricing.js'
import type { Rec } from '../schema.js'
import { declareResource, field } from '../declare.js'

/** unitPrice × quantity, rounded; null while either is missing. */
export function billItemPrice(item: Rec): number | null {
  return typeof item.unitPrice === 'number' && typeof item.quantity === 'number' ? roundMoney(item.unitPrice * item.quantity) : null
}

export const BillItem = declareResource({
  type: 'BillItem',
  path: 'billing/billitems',
  description: 'a line of a bill',
  displayName: (rec) => `#${typeof rec.docIndex === 'number' ? rec.docIndex : ''}`,
  fields: [
    field.ref('bill', 'Bill', 'the bill (from the path of the inner collection)', { required: true }),
    field.integer('docIndex', 'position on the bill', { inStub: true }),
    field.string('itemGroup', 'group the line is shown in'),
    field.double('quantity', 'how many units'),
    field.string('unit', 'unit of the quantity'),
    field.double('unitPrice', 'price of one unit'),
    field.string('attributes', 'attributes of the line, free text (the bill may group its lines by them)'),
    field.double('price', 'unitPrice × quantity', { access: 'READ_ONLY', derive: billItemPrice }),
  ],
})
