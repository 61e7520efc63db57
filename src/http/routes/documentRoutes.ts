/*
 * `$metadata` and `$dummy` of a collection that is a fixed route rather
 * than a declared resource path (`users/@self/secretkeys`): the same
 * documents the generic endpoints give (domain/metadata.ts,
 * domain/dummy.ts), the metadata naming the fixed path.
 */
import { dummyOf } from '../../domain/dummy.js'
import { metadataOf } from '../../domain/metadata.js'
import { resourceByType } from '../../domain/resources/index.js'
import type { Call } from '../call.js'
import { dataResponse, type ApiResponse } from '../response.js'

export interface DocumentHandlers {
  metadata(call: Call): Promise<ApiResponse>
  dummy(call: Call): Promise<ApiResponse>
}

/** The handlers of `<path>/$metadata` and `<path>/$dummy` for the resource `type`. */
export function documentRoutes(type: string, path: string): DocumentHandlers {
  const decl = resourceByType(type)
  return {
    metadata: async (call) => dataResponse(call.request, metadataOf(decl, path), { root: 'metadata' }),
    dummy: async (call) => dataResponse(call.request, dummyOf(decl), { root: decl.xmlItemName }),
  }
}
