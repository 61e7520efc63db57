/*
 * Pricing operations on time records: `POST time/timerecords/$calculateprice`
 * prices a record given in the body and stores nothing; `PUT
 * time/timerecords/{id}/$updateprice` recalculates a stored record's price
 * from the current price lists and saves it.
 */
import { ApiError } from '../../domain/errors.js'
import { readFields } from '../../domain/input.js'
import { calculatePrice, priceFields } from '../../domain/pricing.js'
import { buildRecord } from '../../domain/records.js'
import { renderRecord } from '../../domain/render.js'
import { parseObjectBody } from '../body.js'
import { queryFlag } from '../request.js'
import { dataResponse } from '../response.js'
import type { ResourceAction } from './actions.js'
import { updateIn } from './resources.js'
import { requireSession } from '../requireSession.js'

const calculate: ResourceAction = {
  async handle(call, decl, id) {
    if (id !== null || call.request.method !== 'POST') throw new ApiError('TL01-9003', '$calculateprice needs POST /time/timerecords/$calculateprice')
    const { tenant } = requireSession(call)
    const { value, source } = parseObjectBody(call.request)
    const values = readFields(decl, value, source, true)
    return tenant.read((state) => {
      const record = buildRecord(decl, values, Date.now())
      return dataResponse(call.request, calculatePrice(record, state.collection('TimePriceList').values(), state), { root: 'price' })
    })
  },
}

const update: ResourceAction = {
  async handle(call, decl, id) {
    if (id === null || (call.request.method !== 'PUT' && call.request.method !== 'POST')) throw new ApiError('TL01-9003', '$updateprice needs PUT /time/timerecords/{id}/$updateprice')
    const { tenant, principal } = requireSession(call)
    return tenant.write((tx) => {
      const derive = (rec: Parameters<typeof priceFields>[0]) => priceFields(rec, tx.state.collection('TimePriceList').values(), tx.state)
      const after = updateIn(tx, principal, decl, id, {}, null, false, derive)
      return dataResponse(call.request, renderRecord(decl, after, tx.state, { noExpand: queryFlag(call.request, 'no_expand') }), { root: decl.xmlItemName })
    })
  },
}

export const PRICING_ACTIONS: ReadonlyMap<string, ResourceAction> = new Map([
  ['TimeRecord:$calculateprice', calculate],
  ['TimeRecord:$updateprice', update],
])
