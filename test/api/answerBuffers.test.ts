/*
 * List answers are written into buffers lent by json/answerBuffers.ts and
 * given back by the HTTP server once uWS has copied them. The pool must
 * reuse a buffer given back, and only then: a body not given back stays
 * as it was while other answers are written; a body given back twice, or
 * a stale body after its buffer was lent anew, must not give back a
 * buffer another answer is using; the pool keeps a bounded number.
 * Over HTTP, many list answers in flight at once (reads that wait for the
 * log's flush of writes sent between them) must each arrive exactly as
 * the same list read alone, and the lists of a batch, copied into its
 * answer, give their buffers back too.
 */
import t, { type Test } from 'tap'
import { ANSWER_BUFFER_BYTES, giveBack, pooledCount } from '../../src/json/answerBuffers.js'
import { jsonListBody } from '../../src/json/bytes.js'
import { api, ref } from '../helpers/api.js'
import { startInProcess } from '../helpers/server.js'

function rows(seed: number, count = 50): Record<string, unknown>[] {
  return Array.from({ length: count }, (_, index) => ({ id: `row-${seed}-${index}`, text: `${seed}`.repeat(40 + index), n: seed * 1000 + index }))
}

/** A list body as bytes (answers this small are always bytes, never strings). */
function bodyOf(items: readonly unknown[]): Buffer {
  const body = jsonListBody(items)
  if (!Buffer.isBuffer(body)) throw new Error('a small answer came as a string')
  return body
}

t.test('a body given back lends its buffer to the next answer; one not given back stays as it was', async (t) => {
  const first = bodyOf(rows(1))
  const second = bodyOf(rows(2))
  t.not(second.buffer, first.buffer, 'an answer not given back keeps its buffer')
  t.equal(first.toString(), JSON.stringify(rows(1)), 'and its bytes')
  t.equal(first.buffer.byteLength, ANSWER_BUFFER_BYTES)
  giveBack(first)
  const third = bodyOf(rows(3))
  t.equal(third.buffer, first.buffer, 'the buffer given back is written again')
  t.equal(second.toString(), JSON.stringify(rows(2)))
  t.equal(third.toString(), JSON.stringify(rows(3)))
  giveBack(second)
  giveBack(third)
})

t.test('only the body that was lent gives its buffer back, and only once', async (t) => {
  const stale = bodyOf(rows(4))
  giveBack(stale)
  const pooled = pooledCount()
  giveBack(stale)
  t.equal(pooledCount(), pooled, 'giving back twice is a no-op')
  const current = bodyOf(rows(5))
  t.equal(current.buffer, stale.buffer, 'the buffer is lent to a new answer')
  giveBack(stale)
  giveBack(Buffer.from(current.buffer, 0, current.length))
  const other = bodyOf(rows(6))
  t.not(other.buffer, current.buffer, 'neither the stale body nor another view of the memory gave the lent buffer back')
  t.equal(current.toString(), JSON.stringify(rows(5)), 'the new answer is intact')
  giveBack('a string body')
  giveBack(Buffer.from('a buffer not lent'))
  giveBack(current)
  giveBack(other)
})

t.test('an answer that outgrows the buffer goes on as a string and returns the buffer at once', async (t) => {
  const before = pooledCount()
  const big = rows(7, 30_000)
  const body = jsonListBody(big)
  t.type(body, 'string')
  t.equal(body, JSON.stringify(big))
  t.equal(pooledCount(), before, 'the buffer is back in the pool')
})

t.test('the pool keeps a bounded number of buffers', async (t) => {
  const bodies = Array.from({ length: 40 }, (_, index) => bodyOf(rows(index)))
  for (const body of bodies) giveBack(body)
  t.ok(pooledCount() <= 16, `${pooledCount()} buffers pooled`)
  t.ok(pooledCount() > 0)
})

/** A server in this process with a tenant of `count` time records of its owner on one project (`values` of each). */
async function tenantWithTimeRecords(t: Test, tenant: string, count: number, values: (index: number) => Record<string, unknown>) {
  const server = await startInProcess()
  t.teardown(() => server.stop())
  const owner = api(server.client, tenant, (await server.client.createTenant(tenant)).token)
  const projectId = await owner.create('time/projects', { name: 'Apollo' })
  const ownerId = (await owner.get('users/@self')).json.id as string
  for (let index = 0; index < count; index += 1) await owner.create('time/timerecords', { user: ref(ownerId), project: ref(projectId), ...values(index) })
  return { server, owner }
}

t.test('many list answers in flight at once each arrive as the list read alone', async (t) => {
  const { owner } = await tenantWithTimeRecords(t, 'lent', 60, (index) => ({ duration: 60_000 * (index + 1), description: `r${index} ${'é'.repeat(index)}` }))
  const pages = Array.from({ length: 12 }, (_, page) => ({ $orderby: 'duration', $top: 5 + page, $skip: page * 3, no_expand: page % 2 === 0 }))
  const alone = await Promise.all(pages.map(async (query) => (await owner.get('time/timerecords', query)).text))
  for (let round = 0; round < 4; round += 1) {
    const reads = pages.flatMap((query, page) => [owner.get('time/timerecords', query).then((answer) => ({ page, answer }))])
    // Writes between the reads (new clients, which no listed record shows): the reads answer after the log's flush.
    const writes = Array.from({ length: 6 }, (_, index) => owner.post('time/clients', { name: `client ${round}-${index}` }))
    const more = pages.map((query, page) => owner.get('time/timerecords', query).then((answer) => ({ page, answer })))
    const answers = await Promise.all([...reads, ...more])
    t.ok(
      (await Promise.all(writes)).every((written) => written.status === 201),
      `round ${round}: the writes succeeded`,
    )
    const wrong = answers.filter(({ page, answer }) => answer.status !== 200 || answer.text !== alone[page])
    t.equal(wrong.length, 0, `round ${round}: all ${answers.length} answers as read alone`)
  }
})

t.test('the lists of a batch give their buffers back: a batch of list reads lends no new buffer', async (t) => {
  const { server, owner } = await tenantWithTimeRecords(t, 'lentbatch', 5, () => ({ duration: 60_000 }))
  await owner.get('time/timerecords')
  t.ok(pooledCount() > 0, 'a list read alone left its buffer in the pool')
  const allocate = Buffer.allocUnsafeSlow
  let lentAnew = 0
  Buffer.allocUnsafeSlow = (size: number) => {
    if (size === ANSWER_BUFFER_BYTES) lentAnew += 1
    return allocate(size)
  }
  t.teardown(() => {
    Buffer.allocUnsafeSlow = allocate
  })
  const items = Array.from({ length: 40 }, (_, index) => ({ id: `list${index}`, method: 'GET', path: '/v1/time/timerecords' }))
  const answer = await server.client.request('POST', '/v1/batch', { tenant: 'lentbatch', query: { token: owner.token }, body: items })
  t.equal(answer.status, 200)
  t.same(
    (answer.json as { code: number }[]).map((item) => item.code),
    items.map(() => 200),
  )
  // More lists than the pool ever holds (16): without giving back, the pool would run dry and new buffers be made.
  t.equal(lentAnew, 0, 'each list went back to the pool before the next was written')
})
