/*
 * One hidden class per resource for the records the write paths store.
 * V8 gives an object literal that spreads an object and then adds keys a
 * new hidden class on every evaluation once its site is warm (recordMaking.ts,
 * "a note on spreads"); stored like that, every record of a collection would
 * carry its own map, and every scan and render would miss its inline
 * caches. This drives the paths many times over HTTP and reads V8's verdict
 * on the stored records through a natives-syntax function.
 */
import t from 'tap'
import v8 from 'node:v8'
import type { Rec } from '../../src/domain/schema.js'
import { loginRaw } from '../helpers/identity.js'
import { startInProcess, type InProcessServer } from '../helpers/server.js'

v8.setFlagsFromString('--allow-natives-syntax')
const haveSameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: object, b: object) => boolean

/** How many of the records have another hidden class than the first one. */
function otherShapes(records: Iterable<Rec>): number {
  let first: Rec | undefined
  let others = 0
  for (const rec of records) {
    if (first === undefined) first = rec
    else if (!haveSameMap(first, rec)) others += 1
  }
  return others
}

let server: InProcessServer
t.before(async () => {
  server = await startInProcess()
})
t.teardown(() => server.stop())

t.test('time records created with and without options, and login tokens, share one shape each', async (t) => {
  const { token, email, password } = await server.client.createTenant('acme')
  for (let index = 0; index < 40; index += 1) {
    const body = index % 2 === 0 ? { duration: index * 1000, description: `r${index}` } : { start: '2026-01-01T09:00:00Z', stop: '2026-01-01T10:00:00Z', billable: true }
    const query: Record<string, string> = index % 3 === 0 ? { token, calculate_price: 'true' } : { token }
    const created = await server.client.request('POST', '/v1/time/timerecords', { tenant: 'acme', query, body })
    t.equal(created.status, 201, `record ${index} created`)
  }
  for (let index = 0; index < 15; index += 1) t.equal((await loginRaw(server.client, 'acme', email, password)).status, 200, `login ${index}`)
  const state = server.service.services.registry.get('acme')?.state
  if (state === undefined) throw new Error('no tenant acme')
  t.equal(state.collection('TimeRecord').size, 40)
  t.equal(otherShapes(state.collection('TimeRecord').values()), 0, 'every time record has the first one’s hidden class')
  t.ok(state.collection('AuthToken').size >= 30)
  t.equal(otherShapes(state.collection('AuthToken').values()), 0, 'every token has the first one’s hidden class')
})
