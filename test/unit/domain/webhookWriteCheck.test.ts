/*
 * The write check a resource declares (domain/writeCheck.ts), as the
 * Webhook declares it: `url` is http(s) and, unless private addresses are
 * allowed, not a private or loopback address (before the write, on the
 * values; inside it, on the stored record); `resources` may not name
 * webhooks; `resources` and `filter` go to the change feed's check the
 * caller hands in, whose refusal names the resource.
 */
import t from 'tap'
import { ApiError } from '../../../src/domain/errors.js'
import { Webhook } from '../../../src/domain/resources/webhook.js'
import type { Rec } from '../../../src/domain/schema.js'
import type { WriteCheckServices } from '../../../src/domain/writeCheck.js'

const PUBLIC_URL = 'https://93.184.216.34/hook'

function services(allowPrivateAddresses: boolean, selections: string[] = []): WriteCheckServices {
  return {
    allowPrivateAddresses,
    checkChangeSelection(resources, filter) {
      selections.push(`${resources} | ${filter}`)
      if (filter === 'broken') throw new ApiError('TL01-1105', '$filter: broken is not a filter')
    },
  }
}

function webhook(values: Record<string, unknown>): Rec {
  return { id: 'w', version: 1, createdAt: 0, updatedAt: 0, trashItem: null, url: PUBLIC_URL, resources: null, filter: null, ...values }
}

async function refusal(work: () => unknown): Promise<string | null> {
  try {
    await work()
    return null
  } catch (error) {
    return error instanceof ApiError ? `${error.code} ${error.message}` : String(error)
  }
}

t.test('the Webhook declares its write check: url, private addresses, resources, $filter', async (t) => {
  const check = Webhook.writeCheck
  if (check === null) return t.fail('Webhook declares a write check')
  t.equal(await refusal(() => check.values(services(false), { url: PUBLIC_URL })), null)
  t.match(await refusal(() => check.values(services(false), { url: 'http://127.0.0.1/hook' })), /^TL01-1105 url: 127\.0\.0\.1 is a private/)
  t.equal(await refusal(() => check.values(services(true), { url: 'http://127.0.0.1/hook' })), null, 'unless private addresses are allowed')
  t.match(await refusal(() => check.values(services(false), { url: 'ftp://93.184.216.34/' })), /^TL01-1105 url: a webhook is posted over http or https/)
  t.equal(await refusal(() => check.values(services(false), {})), null, 'a write that names no url is checked on the stored record')
  t.match(await refusal(() => check.record(services(false), webhook({ url: 'http://10.0.0.1/' }))), /^TL01-1105 url: 10\.0\.0\.1/)
  t.match(await refusal(() => check.record(services(false), webhook({ resources: 'time/projects, /webhooks/' }))), /^TL01-1105 resources: the changes of webhooks are never delivered to webhooks/)
  const selections: string[] = []
  t.equal(await refusal(() => check.record(services(false, selections), webhook({ resources: 'time/projects', filter: "name eq 'a'" }))), null)
  t.same(selections, ["time/projects | name eq 'a'"], 'resources and filter as stored go to the change feed’s check')
  t.equal(
    await refusal(() => check.record(services(false), webhook({ resources: 'time/projects', filter: 'broken' }))),
    'TL01-1105 Webhook: $filter: broken is not a filter',
    'its refusal names the resource',
  )
})
