/*
 * Bill numbering (domain/operations/billNumbering.ts), called directly: the
 * next number is the account's sequence + 1; setting the next part is for
 * superusers, takes an integer from 1 to MAX_DOC_NUMBER above every number
 * a bill has (in the trash too), writes sequence = part − 1 on the account
 * (nothing when it already says so), and the next bill takes that number.
 */
import t from 'tap'
import { accountOf } from '../../../src/domain/account.js'
import { MAX_DOC_NUMBER, nextDocNumber, setNextDocNumberPart } from '../../../src/domain/operations/billNumbering.js'
import { createObject } from '../../../src/domain/operations/createObject.js'
import { deleteObject } from '../../../src/domain/operations/deleteObject.js'
import { Bill } from '../../../src/domain/resources/bill.js'
import { addUser, codeOf, domainTenant, NOW } from '../../helpers/domainState.js'

t.test('the next number follows the sequence; setting it writes the account once', async (t) => {
  const { state, owner, write } = domainTenant()
  t.same(nextDocNumber(state), { docNumber: 1, docNumberPart: 1 }, 'a new account starts at 1')
  const before = accountOf(state)
  t.same(
    write((tx) => setNextDocNumberPart(tx, owner, 100), NOW + 7),
    { docNumber: 100, docNumberPart: 100 },
  )
  const after = accountOf(state)
  t.same([after.docNumberSequence, after.version, after.updatedAt], [99, before.version + 1, NOW + 7], 'sequence = part − 1, as a change of the account')
  t.same(nextDocNumber(state), { docNumber: 100, docNumberPart: 100 })
  write((tx) => setNextDocNumberPart(tx, owner, 100), NOW + 8)
  t.equal(accountOf(state).version, before.version + 1, 'setting what it already is writes nothing')
  const bill = write((tx) => createObject(tx, owner, Bill, { description: 'March' }))
  t.equal(bill.docNumber, 100, 'the next bill takes it')
  t.same(nextDocNumber(state), { docNumber: 101, docNumberPart: 101 })
  t.same(write((tx) => setNextDocNumberPart(tx, owner, 5000)).docNumber, 5000, 'a jump forward')
})

t.test('refusals: a user who is no superuser, a part out of range, a part not above every bill’s number', async (t) => {
  const tenant = domainTenant()
  const { state, owner, write } = tenant
  const bob = addUser(tenant, 'bob@acme.test')
  t.equal(
    codeOf(() => write((tx) => setNextDocNumberPart(tx, bob, 10))),
    'TL01-1008',
  )
  for (const part of [0, -1, 1.5, MAX_DOC_NUMBER + 1, Number.NaN])
    t.equal(
      codeOf(() => write((tx) => setNextDocNumberPart(tx, owner, part))),
      'TL01-1104',
      `${part}`,
    )
  t.equal(write((tx) => setNextDocNumberPart(tx, owner, MAX_DOC_NUMBER)).docNumber, MAX_DOC_NUMBER, 'the highest is taken')
  write((tx) => setNextDocNumberPart(tx, owner, 40))
  const bill = write((tx) => createObject(tx, owner, Bill, { description: 'April' }))
  t.equal(bill.docNumber, 40)
  t.equal(
    codeOf(() => write((tx) => setNextDocNumberPart(tx, owner, 40))),
    'TL01-1104',
    'a number a bill has',
  )
  t.equal(
    codeOf(() => write((tx) => setNextDocNumberPart(tx, owner, 12))),
    'TL01-1104',
    'below it',
  )
  write((tx) => deleteObject(tx, owner, Bill, bill.id, false))
  t.equal(
    codeOf(() => write((tx) => setNextDocNumberPart(tx, owner, 40))),
    'TL01-1104',
    'a bill in the trash keeps its number',
  )
  t.equal(accountOf(state).docNumberSequence, 40, 'no refusal changed the sequence')
  t.equal(write((tx) => setNextDocNumberPart(tx, owner, 41)).docNumber, 41)
})
