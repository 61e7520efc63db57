/*
 * Bill numbering over HTTP (the rules in domain/operations/billNumbering.ts):
 *
 *   GET        billing/bills/$getNextDocNumber       {docNumber, docNumberPart} of the next bill
 *   GET        billing/bills/$getNextDocNumberPart   the same
 *   POST|PUT   billing/bills/$setNextDocNumberPart   ?docNumberPart=N (or a body {"docNumberPart": N}):
 *                                                    the next bill gets N; answers the same shape
 */
import { nextDocNumber, setNextDocNumberPart } from '../../domain/operations/billNumbering.js'
import { requireSession } from '../requireSession.js'
import { dataResponse } from '../response.js'
import { integerParameter } from './actionParameter.js'
import { onCollectionOnly } from './actionShape.js'
import type { ResourceAction } from './resourceAction.js'

const XML_NAMES = { root: 'nextDocNumber' }

const getNext = (name: string): ResourceAction => ({
  async handle(call, _decl, id) {
    onCollectionOnly(call, name, id, ['GET'])
    const { tenant } = requireSession(call)
    return tenant.read((state) => dataResponse(call.request, nextDocNumber(state), XML_NAMES))
  },
})

const setNext: ResourceAction = {
  async handle(call, _decl, id) {
    onCollectionOnly(call, '$setNextDocNumberPart', id, ['POST', 'PUT'])
    const { tenant, principal } = requireSession(call)
    const part = integerParameter(call, '$setNextDocNumberPart', 'docNumberPart')
    const next = await tenant.write((tx) => setNextDocNumberPart(tx, principal, part))
    return dataResponse(call.request, next, XML_NAMES)
  },
}

export const BILL_NUMBERING_ACTIONS: ReadonlyMap<string, ResourceAction> = new Map([
  ['Bill:$getNextDocNumber', getNext('$getNextDocNumber')],
  ['Bill:$getNextDocNumberPart', getNext('$getNextDocNumberPart')],
  ['Bill:$setNextDocNumberPart', setNext],
])
