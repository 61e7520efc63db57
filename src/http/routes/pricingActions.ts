/*
 * Pricing operations (domain/operations/prices.ts): `POST
 * time/timerecords/$calculateprice` prices a record given in the body and
 * stores nothing; `PUT time/timerecords/{id}/$updateprice` recalculates a
 * stored record's price from the current price lists and saves it;
 * `GET billing/pricelists/time/$findpricelist?user=…&workType=…&project=…
 * &task=…&client=…` answers the price list that applies to that
 * combination (404 when none does). Inside an inner collection
 * (`time/users/{id}/timerecords/$calculateprice`,
 * `time/projects/{id}/pricelists/$findpricelist`) the parent fills its
 * reference: the record priced is the parent's, the combination names it.
 */
import { ApiError } from '../../domain/errors.js'
import { readFields } from '../../domain/input.js'
import { findPriceList, priceOf, updatePrice } from '../../domain/operations/prices.js'
import { fieldsFromText } from '../../domain/operations/setFields.js'
import { DIMENSIONS, type Dimension } from '../../domain/pricing.js'
import { andThen } from '../../maybePromise.js'
import { parseObjectBody } from '../body.js'
import { requireSession } from '../requireSession.js'
import { dataResponse } from '../response.js'
import { objectAnswer } from './objectAnswer.js'
import type { ResourceAction } from './resourceAction.js'

const calculate: ResourceAction = {
  async handle(call, decl, id, within) {
    if (id !== null || call.request.method !== 'POST') throw new ApiError('TL01-9003', '$calculateprice needs POST /time/timerecords/$calculateprice')
    const { tenant } = requireSession(call)
    const { value, source } = parseObjectBody(call.request)
    const values = readFields(decl, value, source, true)
    if (within !== null && within !== undefined) values[within.via] = within.parentId
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

const DIMENSION_NAMES: ReadonlySet<string> = new Set(DIMENSIONS)

const findPriceListAction: ResourceAction = {
  async handle(call, decl, id, within) {
    if (id !== null || call.request.method !== 'GET') throw new ApiError('TL01-9003', '$findpricelist needs GET /billing/pricelists/time/$findpricelist?user=…&workType=…&project=…&task=…&client=…')
    const { tenant } = requireSession(call)
    const pairs = [...call.request.query].filter(([name]) => DIMENSION_NAMES.has(name))
    const combination = fieldsFromText(decl, pairs) as Partial<Record<Dimension, string | null>>
    if (within !== null && within !== undefined) combination[within.via as Dimension] = within.parentId
    return andThen(
      tenant.read((state) => findPriceList(state, combination)),
      (found) => objectAnswer(call, tenant, decl, found),
    )
  },
}

export const PRICING_ACTIONS: ReadonlyMap<string, ResourceAction> = new Map([
  ['TimeRecord:$calculateprice', calculate],
  ['TimeRecord:$updateprice', update],
  ['TimePriceList:$findpricelist', findPriceListAction],
])
