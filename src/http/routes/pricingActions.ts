/*
 * Pricing operations on time records (domain/operations/prices.ts): `POST
 * time/timerecords/$calculateprice` prices a record given in the body and
 * stores nothing; `PUT time/timerecords/{id}/$updateprice` recalculates a
 * stored record's price from the current price lists and saves it.
 */
import { ApiError } from '../../domain/errors.js'
import { readFields } from '../../domain/input.js'
import { priceOf, updatePrice } from '../../domain/operations/prices.js'
import { parseObjectBody } from '../body.js'
import { requireSession } from '../requireSession.js'
import { dataResponse } from '../response.js'
import { objectAnswer } from './objectAnswer.js'
import type { ResourceAction } from './resourceAction.js'

const calculate: ResourceAction = {
  async handle(call, decl, id) {
    if (id !== null || call.request.method !== 'POST') throw new ApiError('TL01-9003', '$calculateprice needs POST /time/timerecords/$calculateprice')
    const { tenant } = requireSession(call)
    const { value, source } = parseObjectBody(call.request)
    const values = readFields(decl, value, source, true)
    return tenant.read((state) => dataResponse(call.request, priceOf(state, decl, values, Date.now()), { root: 'price' }))
  },
}

const update: ResourceAction = {
  async handle(call, decl, id) {
    if (id === null || (call.request.method !== 'PUT' && call.request.method !== 'POST')) throw new ApiError('TL01-9003', '$updateprice needs PUT /time/timerecords/{id}/$updateprice')
    const { tenant, principal } = requireSession(call)
    const after = await tenant.write((tx) => updatePrice(tx, principal, decl, id))
    return objectAnswer(call, tenant, decl, after)
  },
}

export const PRICING_ACTIONS: ReadonlyMap<string, ResourceAction> = new Map([
  ['TimeRecord:$calculateprice', calculate],
  ['TimeRecord:$updateprice', update],
])
