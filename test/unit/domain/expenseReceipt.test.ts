/*
 * The receipt slot of an expense (domain/operations/expenseReceipt.ts),
 * its rule called directly: uploading or removing a receipt needs what
 * changing the expense needs: the write permission of expenses (its user,
 * superusers; not another plain user) and the expense outside a locked
 * period unless the caller is a superuser (412 TL01-1106).
 */
import t from 'tap'
import { createObject } from '../../../src/domain/operations/createObject.js'
import { RECEIPT } from '../../../src/domain/operations/expenseReceipt.js'
import { Expense } from '../../../src/domain/resources/expense.js'
import { ExpenseType } from '../../../src/domain/resources/expenseType.js'
import { Lock } from '../../../src/domain/resources/lock.js'
import { Project } from '../../../src/domain/resources/project.js'
import { addUser, codeOf, domainTenant, NOW } from '../../helpers/domainState.js'

const DAY_MS = 86_400_000

t.test('the slot: the expense’s receipt field', async (t) => {
  t.same([RECEIPT.name, RECEIPT.ownerType, RECEIPT.ownerField], ['receipt', Expense.type, 'receipt'])
  t.ok(
    Expense.fields.some((field) => field.name === RECEIPT.ownerField),
    'a field of Expense',
  )
})

t.test('who may change the receipt, and when', async (t) => {
  const mayChange = RECEIPT.mayChange
  if (mayChange === undefined) throw new Error('the receipt slot has no rule of who may change it')
  const tenant = domainTenant()
  const { state, owner, write } = tenant
  const bob = addUser(tenant, 'bob@acme.test')
  const carol = addUser(tenant, 'carol@acme.test')
  const project = write((tx) => createObject(tx, owner, Project, { name: 'Launch' }))
  const type = write((tx) => createObject(tx, owner, ExpenseType, { name: 'Travel' }))
  const expense = write((tx) => createObject(tx, owner, Expense, { user: bob.userId, project: project.id, expenseType: type.id, date: NOW - 10 * DAY_MS }))
  t.equal(
    codeOf(() => mayChange(state, bob, expense)),
    null,
    'its user',
  )
  t.equal(
    codeOf(() => mayChange(state, carol, expense)),
    'TL01-1008',
    'another plain user',
  )
  t.equal(
    codeOf(() => mayChange(state, owner, expense)),
    null,
    'a superuser',
  )
  write((tx) => createObject(tx, owner, Lock, { lockDate: NOW - 5 * DAY_MS, user: null }))
  t.equal(
    codeOf(() => mayChange(state, bob, expense)),
    'TL01-1106',
    'its user, once the period is locked',
  )
  t.equal(
    codeOf(() => mayChange(state, owner, expense)),
    null,
    'a superuser still',
  )
})
