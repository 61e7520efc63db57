/*
 * Expense (time/expenses): money a user spent on a project (travel,
 * material), of an expense type, dated by day like a time record and
 * locked like one (Lock). `total` is derived: quantity × unitPrice, rounded
 * to cents; a new expense takes the unit price and billable default of its
 * type when it names none (onCreate). The receipt is an uploaded file
 * (files.ts, slot `receipt`): its metadata record is `receipt`, set by the
 * upload, never by a body.
 */
import { roundMoney } from '../pricing.js'
import type { Rec } from '../schema.js'
import { declareResource, field, min, userDisplayName } from '../declare.js'
import type { Tx } from '../tx.js'

/** quantity × unitPrice, rounded; null while either is missing. */
function expenseTotal(expense: Rec): number | null {
  return typeof expense.unitPrice === 'number' && typeof expense.quantity === 'number' ? roundMoney(expense.unitPrice * expense.quantity) : null
}

/** The unit price and billable flag of the expense type, for a new expense that leaves them out. */
function typeDefaults(tx: Tx, expense: Rec): Rec {
  const type = typeof expense.expenseType === 'string' ? tx.state.get('ExpenseType', expense.expenseType) : undefined
  if (type === undefined) return expense
  const unitPrice = expense.unitPrice ?? type.unitPrice ?? null
  const billable = expense.billable ?? type.billable ?? null
  return unitPrice === expense.unitPrice && billable === expense.billable ? expense : { ...expense, unitPrice, billable }
}

export const Expense = declareResource({
  type: 'Expense',
  path: 'time/expenses',
  writeRule: 'ownRecord',
  description: 'money a user spent on a project',
  displayName: userDisplayName,
  indexOrder: 'date',
  lockedByDate: 'date',
  onCreate: typeDefaults,
  fields: [
    field.date('date', 'day the money was spent', { required: true, rangeIndexed: true }),
    field.ref('user', 'User', 'who spent the money', { required: true }),
    field.ref('project', 'Project', 'project the money was spent on', { required: true }),
    field.ref('task', 'Task', 'task the money was spent on'),
    field.ref('client', 'Client', 'client the money was spent for'),
    field.ref('expenseType', 'ExpenseType', 'kind of expense', { required: true }),
    field.double('quantity', 'how many units', { defaultValue: 1, constraints: [min(0)] }),
    field.double('unitPrice', 'price of one unit (from the expense type unless given)', { constraints: [min(0)] }),
    field.double('total', 'quantity × unitPrice, rounded to cents', { access: 'READ_ONLY', derive: expenseTotal }),
    field.boolean('billable', 'the expense will be billed (from the expense type unless given)'),
    field.boolean('billed', 'the expense was billed', { access: 'READ_ONLY' }),
    field.string('note', 'what the money was spent on'),
    field.ref('receipt', 'FileMetadata', 'the uploaded receipt (time/expenses/{id}/receipt/upload)', { access: 'READ_ONLY', indexed: false }),
  ],
})
