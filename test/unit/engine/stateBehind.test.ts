/*
 * The engine's state behind the domain's TenantView (src/engine/stateBehind.ts):
 * the query layer takes the view a route holds back to the state, which it
 * is; anything else that looks like a view is a bug, refused at the entry.
 */
import t from 'tap'
import type { TenantView } from '../../../src/domain/tx.js'
import { stateBehind } from '../../../src/engine/stateBehind.js'
import { TenantState } from '../../../src/engine/tenantState.js'
import { planList } from '../../../src/query/plan.js'
import { resourceByType } from '../../../src/domain/resources/index.js'

t.test('the view a route holds is the state itself; a look-alike is an assertion failure', async (t) => {
  const state = new TenantState('acme')
  const view: TenantView = state
  t.equal(stateBehind(view), state)
  const lookAlike: TenantView = {
    tenant: 'acme',
    seq: 0,
    changes: 0,
    aggregates: state.aggregates,
    collections: state.collections,
    collection: (type) => state.collection(type),
    get: (type, id) => state.get(type, id),
    displayNameOf: (type, id) => state.displayNameOf(type, id),
  }
  t.throws(() => stateBehind(lookAlike), /assertion failed: tenant acme: a view that is not the engine's state/)
  const plan = planList(resourceByType('Project'), new Map())
  t.same(plan.run(view, { userId: 'u', superuser: true }, { kind: 'all' }), [])
  t.throws(() => plan.run(lookAlike, { userId: 'u', superuser: true }, { kind: 'all' }), /assertion failed/)
})
