/*
 * Activating a large tenant does not hold up the others (ARCHITECTURE.md §2.4): its
 * snapshot and log are loaded a slice per event-loop turn, so a request for
 * a small tenant, sent while the large one is loading, is answered first —
 * both on the first request after a restart and when a resting tenant
 * wakes. Requests for the loading tenant wait for the one activation and
 * see all of its data. A resting tenant whose state is touched (and so
 * loaded at once) while it wakes in turns keeps the state loaded first.
 */
import t from 'tap'
import { api } from '../helpers/api.js'
import type { TestResponse } from '../helpers/http.js'
import { startInProcess, tempDataDir } from '../helpers/server.js'
import { insertRecord } from '../../src/domain/recordMaking.js'
import { TimeRecord } from '../../src/domain/resources/timeRecord.js'

const BIG_RECORDS = 20_000
const RECORDS_PER_WRITE = 1_000
/** Time for the large tenant's activation to be under way before the small tenant's request goes out. */
const HEAD_START_MS = 20

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Sends `bigCalls` requests for the large tenant at once, then one for the small tenant a moment later: the order in
 * which they were answered, and the large tenant's answers.
 */
async function answerOrder(bigCalls: number, big: () => Promise<TestResponse>, small: () => Promise<TestResponse>): Promise<{ order: string[]; bigAnswers: string[] }> {
  const order: string[] = []
  const bigDone = Promise.all(
    Array.from({ length: bigCalls }, () =>
      big().then((answer) => {
        order.push('big')
        return answer.text
      }),
    ),
  )
  await sleep(HEAD_START_MS)
  const smallDone = small().then((answer) => order.push(answer.status === 200 ? 'small' : `small ${answer.status}`))
  const [bigAnswers] = await Promise.all([bigDone, smallDone])
  return { order, bigAnswers }
}

t.test('a small tenant is answered while a large one is being activated or woken', async (t) => {
  const dataDir = tempDataDir('activation')
  const first = await startInProcess(dataDir, { IDLE_EVICT_MS: '0' })
  const bigOwner = await first.client.createTenant('big')
  const smallOwner = await first.client.createTenant('small')
  const { registry } = first.service.services
  const bigActor = registry.get('big')
  if (bigActor === undefined) throw new Error('no big tenant')
  const userId = [...bigActor.state.collection('User').values()][0]?.id
  for (let written = 0; written < BIG_RECORDS; written += RECORDS_PER_WRITE) {
    await bigActor.write((tx) => {
      for (let index = 0; index < RECORDS_PER_WRITE; index += 1) {
        insertRecord(tx, TimeRecord, { user: userId, start: Date.UTC(2026, 0, 1) + (written + index) * 60_000, duration: 60_000, description: `record ${written + index}` })
      }
    })
  }
  await bigActor.snapshot()
  await first.stop()

  const server = await startInProcess(dataDir, { IDLE_EVICT_MS: '0' })
  t.teardown(() => server.stop())
  const big = api(server.client, 'big', bigOwner.token)
  const small = api(server.client, 'small', smallOwner.token)
  const count = () => big.get('time/timerecords/$count')

  const everyRecord = Array(3).fill(String(BIG_RECORDS))
  const afterRestart = await answerOrder(3, count, () => small.get('time/projects'))
  t.same(afterRestart.order, ['small', 'big', 'big', 'big'], 'after a restart, the small tenant is answered first')
  t.same(afterRestart.bigAnswers, everyRecord, 'the requests that came during the activation see every record')

  const { registry: restarted } = server.service.services
  const woken = restarted.get('big')
  t.ok(await restarted.evict('big'), 'the large tenant is put to rest')
  t.ok(await restarted.evict('small'), 'and the small one')
  const afterRest = await answerOrder(3, count, () => small.get('time/projects'))
  t.same(afterRest.order, ['small', 'big', 'big', 'big'], 'when the large tenant wakes, the small one is answered first')
  t.same(afterRest.bigAnswers, everyRecord)
  t.equal(restarted.get('big'), woken, 'the same actor woke')
})

t.test('a resting tenant touched at once while it wakes in turns keeps the state loaded first', async (t) => {
  const server = await startInProcess(tempDataDir('activation-touch'), { IDLE_EVICT_MS: '0' })
  t.teardown(() => server.stop())
  const owner = await server.client.createTenant('touched')
  const { registry } = server.service.services
  const actor = registry.get('touched')
  t.ok(await registry.evict('touched'), 'put to rest')
  const waking = registry.open('touched')
  const loadedAtOnce = actor?.loadAtOnce()
  t.equal(await waking, actor, 'the same actor woke')
  t.equal(actor?.state, loadedAtOnce, 'the state loaded at once is kept, not replaced by the one loaded in turns')
  t.equal((await api(server.client, 'touched', owner.token).get('time/projects')).status, 200)
})
