/*
 * Query options that change what a create or update stores, declared once:
 * each names its query parameter, the resource types it applies to, and the
 * fields it derives from the record about to be stored. Using one on a
 * resource it does not apply to is a 400.
 */
import { wrongParameter } from '../../domain/errors.js'
import { priceFields } from '../../domain/pricing.js'
import type { DeriveFields } from '../../domain/operations/deriveFields.js'
import type { ResourceDecl } from '../../domain/schema.js'
import type { ApiRequest } from '../request.js'

export interface WriteOption {
  param: string
  types: readonly string[]
  derive: DeriveFields
}

export const WRITE_OPTIONS: readonly WriteOption[] = [
  {
    param: 'calculate_price',
    types: ['TimeRecord'],
    derive: (rec, state) => priceFields(rec, state.collection('TimePriceList').values(), state),
  },
]

/** The fields the request's write options derive, as one function (identity when none is asked for). */
export function writeOptionsOf(request: ApiRequest, decl: ResourceDecl): DeriveFields | undefined {
  const chosen = WRITE_OPTIONS.filter((option) => request.query.get(option.param) === 'true')
  for (const option of chosen) {
    if (!option.types.includes(decl.type)) throw wrongParameter(`${option.param} does not apply to ${decl.type}`)
  }
  if (chosen.length === 0) return undefined
  return (rec, state) => Object.assign({}, ...chosen.map((option) => option.derive(rec, state))) as Record<string, unknown>
}
