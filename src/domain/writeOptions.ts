/*
 * The write options the resources declare (ResourceDecl.writeOptions:
 * `calculate_price` on time records), read for every resource alike: which
 * query parameters are write options and of which resources, and for a
 * write, the options it asks for as one function deriving their fields from
 * the record about to be stored. Asking one of a resource that does not
 * declare it is a 400 TL01-1105. http/routes/writeOptions.ts reads from the
 * query which are asked.
 */
import { wrongParameter } from './errors.js'
import type { DeriveFields } from './deriveFields.js'
import type { ResourceDecl } from './schema.js'

export interface WriteOptionParam {
  readonly param: string
  /** The resource types that declare it. */
  readonly types: readonly string[]
}

/** Every write option the declarations name, with the types that declare it, in declaration order. */
export function writeOptionParams(decls: readonly ResourceDecl[]): WriteOptionParam[] {
  const types = new Map<string, string[]>()
  for (const decl of decls) {
    for (const option of decl.writeOptions) types.set(option.param, [...(types.get(option.param) ?? []), decl.type])
  }
  return [...types].map(([param, declaring]) => ({ param, types: declaring }))
}

/** The fields the write options `asked` derive on a write of `decl`, as one function; undefined when none is asked. */
export function derivedByOptions(decl: ResourceDecl, asked: readonly string[]): DeriveFields | undefined {
  if (asked.length === 0) return undefined
  const derives = asked.map((param) => {
    const declared = decl.writeOptions.find((option) => option.param === param)
    if (declared === undefined) throw wrongParameter(`${param} does not apply to ${decl.type}`)
    return declared.derive
  })
  return (rec, state) => Object.assign({}, ...derives.map((derive) => derive(rec, state))) as Record<string, unknown>
}
