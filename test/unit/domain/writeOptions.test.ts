/*
 * Write options read from the declarations (domain/writeOptions.ts): a
 * small resource declared here, Gauge, declares `double_it`; the reader
 * lists it with the types that declare it, derives its fields when asked,
 * and refuses it (400 TL01-1105) on a resource that does not declare it.
 * The service's own: calculate_price on time records prices from the price
 * lists.
 */
import t from 'tap'
import { RESOURCES } from '../../../src/domain/resources/index.js'
import { TimePriceList } from '../../../src/domain/resources/timePriceList.js'
import { TimeRecord } from '../../../src/domain/resources/timeRecord.js'
import { Project } from '../../../src/domain/resources/project.js'
import { createObject } from '../../../src/domain/operations/createObject.js'
import { declareResource, field } from '../../../src/domain/declare.js'
import { derivedByOptions, writeOptionParams } from '../../../src/domain/writeOptions.js'
import { codeOf, domainTenant } from '../../helpers/domainState.js'

const Gauge = declareResource({
  type: 'Gauge',
  path: 'gauges',
  description: 'a gauge (declared by this test)',
  displayName: () => 'gauge',
  writeOptions: [{ param: 'double_it', derive: (rec) => ({ doubled: Number(rec.value) * 2 }) }],
  fields: [field.integer('value', 'a value'), field.integer('doubled', 'twice the value, when asked')],
})

const Plain = declareResource({ type: 'Plain', path: 'plains', description: 'no options (declared by this test)', displayName: () => 'plain', fields: [] })

t.test('a declared write option: listed with its types, derived when asked, refused elsewhere', async (t) => {
  t.same(writeOptionParams([Plain, Gauge]), [{ param: 'double_it', types: ['Gauge'] }])
  const state = domainTenant().state
  t.equal(derivedByOptions(Gauge, []), undefined, 'none asked: nothing derived')
  t.same(derivedByOptions(Gauge, ['double_it'])?.({ id: 'g', version: 1, createdAt: 0, updatedAt: 0, trashItem: null, value: 21 }, state), { doubled: 42 })
  t.equal(
    codeOf(() => derivedByOptions(Plain, ['double_it'])),
    'TL01-1105',
  )
  t.throws(() => derivedByOptions(Plain, ['double_it']), /double_it does not apply to Plain/)
})

t.test('the service’s: calculate_price on time records alone, priced from the price lists', async (t) => {
  t.same(writeOptionParams(RESOURCES), [{ param: 'calculate_price', types: ['TimeRecord'] }])
  t.equal(
    codeOf(() => derivedByOptions(Project, ['calculate_price'])),
    'TL01-1105',
  )
  const tenant = domainTenant()
  tenant.write((tx) => createObject(tx, tenant.owner, TimePriceList, { user: tenant.owner.userId, price: 60 }))
  const derive = derivedByOptions(TimeRecord, ['calculate_price'])
  const record = { id: 'r', version: 1, createdAt: 0, updatedAt: 0, user: tenant.owner.userId, start: 0, duration: 5_400_000, billable: true, trashItem: null }
  t.match(derive?.(record, tenant.state), { price: 90, unitPrice: 60 }, '1.5 h at 60 an hour')
})
