/* ExpenseType (time/expenseTypes): a kind of expense (travel, material), with the unit and unit price new expenses of it start from. */
import { declareResource, field, min, size } from '../declare.js'

export const ExpenseType = declareResource({
  type: 'ExpenseType',
  path: 'time/expenseTypes',
  writeRule: 'projectManager',
  description: 'a kind of expense',
  displayName: (rec) => String(rec.name ?? ''),
  unique: [['name']],
  fields: [
    field.string('name', 'name of the expense type, unique in the account', { required: true, inStub: true, indexed: true, constraints: [size(1, 100)] }),
    field.string('code', 'short code', { constraints: [size(0, 20)] }),
    field.string('unit', 'unit of the quantity (km, piece); null: a flat amount'),
    field.double('unitPrice', 'price of one unit that a new expense of this type takes unless it names one', { constraints: [min(0)] }),
    field.boolean('billable', 'expenses of this type are billed by default', { defaultValue: true }),
    field.boolean('active', 'the type is offered for new expenses', { defaultValue: true }),
  ],
})
