/*
 * What a write puts in its log entry for the history (src/engine/writeTx.ts):
 * who made it (`actAs`; null when no signed-in user did), and for a put
 * that replaced a record whose changes are events the fields it changed
 * with their values before; nothing more for a create, nor for a record
 * that is never an event (a token).
 */
import t from 'tap'
import { buildRecord } from '../../../src/domain/recordMaking.js'
import { resourceByType } from '../../../src/domain/resources/index.js'
import { TenantState } from '../../../src/engine/tenantState.js'
import { WriteTx } from '../../../src/engine/writeTx.js'

const AT = 1_700_000_000_000
const Client = resourceByType('Client')

function freshState(): TenantState {
  const state = new TenantState('acme')
  state.finishLoad()
  return state
}

t.test('a create carries no values before; an update the changed fields; the acting user', async (t) => {
  const state = freshState()
  const client = buildRecord(Client, { name: 'Initech' }, AT)
  const first = new WriteTx(state, AT)
  t.equal(first.by, null, 'no signed-in user unless named')
  first.put('Client', client)
  t.same(first.ops, [{ op: 'put', type: 'Client', rec: client }], 'a create: the record alone')
  const second = new WriteTx(state, AT + 1)
  second.actAs('user-1')
  t.equal(second.by, 'user-1')
  second.put('Client', { ...client, name: 'Initech AG', version: 2, updatedAt: AT + 1 })
  t.same(second.ops[0]?.op === 'put' ? second.ops[0].was : null, { names: ['name'], values: ['Initech'] })
  second.put('Client', { ...client, name: 'Initech AG', version: 3, updatedAt: AT + 1 })
  t.equal(second.ops[1]?.op === 'put' ? second.ops[1].was : null, undefined, 'nothing but the bookkeeping changed: nothing carried')
})

t.test('a record that is never an event carries nothing before', async (t) => {
  const state = freshState()
  const token = buildRecord(resourceByType('AuthToken'), { kind: 'access' }, AT)
  new WriteTx(state, AT).put('AuthToken', token)
  const tx = new WriteTx(state, AT + 1)
  tx.put('AuthToken', { ...token, version: 2, kind: 'refresh' })
  t.equal(tx.ops[0]?.op === 'put' ? tx.ops[0].was : null, undefined)
})
