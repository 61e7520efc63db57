/*
 * Pricing of time records from the tenant's price lists (pricing.ts):
 * pricing a record given by its values without storing anything (a read),
 * and recalculating a stored record's price from the current price lists
 * and saving it (an update that checks no version); finding the price list
 * that applies to a combination of user, work type, project, task and
 * client (a read).
 */
import type { Caller } from '../caller.js'
import { ApiError } from '../errors.js'
import { calculatePrice, priceFields, priceListFor, type CalculatedPrice, type Dimension } from '../pricing.js'
import { buildRecord } from '../recordMaking.js'
import type { ChangeSession, Rec, ResourceDecl } from '../schema.js'
import type { StateView, Tx } from '../tx.js'
import { changeFields } from './updateObject.js'

/** The price of a record with these values, built at `nowMs` (nothing is stored). */
export function priceOf(state: StateView, decl: ResourceDecl, values: Record<string, unknown>, nowMs: number): CalculatedPrice {
  return calculatePrice(buildRecord(decl, values, nowMs), state.collection('TimePriceList').values(), state)
}

export function updatePrice(tx: Tx, caller: Caller & ChangeSession, decl: ResourceDecl, id: string): Rec {
  return changeFields(tx, caller, decl, id, {}, (rec, state) => priceFields(rec, state.collection('TimePriceList').values(), state))
}

/** The live price list that applies to the combination, or 404 when none does. */
export function findPriceList(state: StateView, combination: Partial<Record<Dimension, string | null>>): Rec {
  const found = priceListFor(combination, state.collection('TimePriceList').values(), state)
  if (found !== undefined) return found
  const named = Object.entries(combination)
    .filter(([, id]) => typeof id === 'string')
    .map(([dimension, id]) => `${dimension} '${String(id)}'`)
  throw new ApiError('TL01-1101', `no TimePriceList applies to ${named.length === 0 ? 'an empty combination' : named.join(', ')}`)
}
