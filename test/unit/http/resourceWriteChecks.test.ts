/*
 * The write checks the resources declare (domain/writeCheck.ts), run by the
 * HTTP layer for every resource alike (http/routes/resourceWriteChecks.ts):
 * here one of a resource this test declares, handed the configuration
 * (WEBHOOK_ALLOW_PRIVATE) and the change feed's own selection parser.
 */
import t from 'tap'
import { declareResource, field } from '../../../src/domain/declare.js'
import type { Call } from '../../../src/http/call.js'
import { writeCheckOf } from '../../../src/http/routes/resourceWriteChecks.js'

t.test('HTTP runs a declared write check generically, with the configuration and the change feed’s check', async (t) => {
  const seen: string[] = []
  const Gadget = declareResource({
    type: 'Gadget',
    path: 'gadgets',
    description: 'a gadget (declared by this test)',
    displayName: () => 'gadget',
    writeCheck: {
      async values(given, values) {
        seen.push(`values ${String(values.name)} private ${given.allowPrivateAddresses}`)
      },
      record(given, rec) {
        seen.push(`record ${String(rec.name)}`)
        given.checkChangeSelection('time/projects', String(rec.name))
      },
    },
    fields: [field.string('name', 'a name')],
  })
  const call = { services: { config: { webhookAllowPrivate: true } } } as unknown as Call
  const check = writeCheckOf(Gadget)
  await check?.values(call, { name: 'a' })
  check?.record(call, { id: 'g', version: 1, createdAt: 0, updatedAt: 0, trashItem: null, name: "name eq 'a'" })
  t.same(seen, ['values a private true', "record name eq 'a'"])
  t.throws(
    () => check?.record(call, { id: 'g', version: 1, createdAt: 0, updatedAt: 0, trashItem: null, name: 'name eq' }),
    { code: 'TL01-1105' },
    'the change feed’s own parser refuses a broken $filter',
  )
  t.equal(writeCheckOf(declareResource({ type: 'Bare', path: 'bares', description: 'none', displayName: () => '', fields: [] })), undefined, 'none declared: none run')
})
