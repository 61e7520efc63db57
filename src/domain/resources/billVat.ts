/* BillVat (billing/billvats; inner collection billing/bills/{id}/vats): the VAT of one rate on a bill. */
import { declareResource, field } from '../declare.js'

export const BillVat = declareResource({
  type: 'BillVat',
  path: 'billing/billvats',
  description: 'VAT of one rate on a bill',
  displayName: (rec) => (typeof rec.vatRate === 'number' ? String(rec.vatRate) : ''),
  fields: [
    field.ref('bill', 'Bill', 'the bill (from the path of the inner collection)', { required: true }),
    field.double('vatRate', 'VAT rate in percent', { inStub: true }),
    field.double('vatPrice', 'VAT amount at this rate'),
  ],
})
