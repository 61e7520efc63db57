/*
 * The engine's state behind the domain's TenantView. The layers above the
 * query layer hold a tenant's state only as that narrow view (domain/tx.ts);
 * the query layer plans over the engine's columns and indexes, so at its
 * entry it takes the view back to the state that implements it. No copy
 * and no wrapper: the view IS the state, checked once per call.
 */
import { assertionFailed } from '../assert.js'
import type { TenantView } from '../domain/tx.js'
import { TenantState } from './tenantState.js'

export function stateBehind(view: TenantView): TenantState {
  if (!(view instanceof TenantState)) assertionFailed(`tenant ${view.tenant}: a view that is not the engine's state`)
  return view
}
