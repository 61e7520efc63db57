/*
 * Query options that change what a create or update stores: each resource
 * declares its own (ResourceDecl.writeOptions: the query parameter and the
 * fields it derives from the record about to be stored; `calculate_price`
 * on time records). Using one on a resource that does not declare it is a
 * 400.
 */
import { wrongParameter } from '../../domain/errors.js'
import type { DeriveFields } from '../../domain/operations/deriveFields.js'
import { RESOURCES } from '../../domain/resources/index.js'
import type { ResourceDecl } from '../../domain/schema.js'
import type { ApiRequest } from '../request.js'

export interface WriteOption {
  param: string
  types: readonly string[]
}

/** Every write option declared, with the resource types that declare it. */
export const WRITE_OPTIONS: readonly WriteOption[] = [...new Set(RESOURCES.flatMap((decl) => decl.writeOptions.map((option) => option.param)))].map((param) => ({
  param,
  types: RESOURCES.filter((decl) => decl.writeOptions.some((option) => option.param === param)).map((decl) => decl.type),
}))

/** The fields the request's write options derive, as one function (identity when none is asked for). */
export function writeOptionsOf(request: ApiRequest, decl: ResourceDecl): DeriveFields | undefined {
  const chosen = WRITE_OPTIONS.filter((option) => request.query.get(option.param) === 'true')
  if (chosen.length === 0) return undefined
  const derives = chosen.map((option) => {
    const declared = decl.writeOptions.find((own) => own.param === option.param)
    if (declared === undefined) throw wrongParameter(`${option.param} does not apply to ${decl.type}`)
    return declared.derive
  })
  return (rec, state) => Object.assign({}, ...derives.map((derive) => derive(rec, state))) as Record<string, unknown>
}
