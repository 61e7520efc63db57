/*
 * Query options that change what a create or update stores, as the
 * resources declare them (domain/writeOptions.ts reads the declarations):
 * here, which of them a request asks for (`calculate_price=true`).
 */
import type { DeriveFields } from '../../domain/deriveFields.js'
import { RESOURCES } from '../../domain/resources/index.js'
import type { ResourceDecl } from '../../domain/schema.js'
import { derivedByOptions, writeOptionParams, type WriteOptionParam } from '../../domain/writeOptions.js'
import type { ApiRequest } from '../request.js'

/** Every write option declared, with the resource types that declare it. */
export const WRITE_OPTIONS: readonly WriteOptionParam[] = writeOptionParams(RESOURCES)

/** The fields the request's write options derive, as one function (undefined when none is asked for). */
export function writeOptionsOf(request: ApiRequest, decl: ResourceDecl): DeriveFields | undefined {
  const asked = WRITE_OPTIONS.filter((option) => request.query.get(option.param) === 'true').map((option) => option.param)
  return derivedByOptions(decl, asked)
}
