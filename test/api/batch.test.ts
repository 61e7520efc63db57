/*
 * Batch calls: items run like lone requests, in order, in one group commit;
 * transaction groups are all or nothing (also across a restart and a crash).
 */
import t from 'tap'
import { api, newUser } from '../helpers/api.js'
import { killHard, spawnServer, startInProcess, tempDataDir } from '../helpers/server.js'
import { inClusterParitySuite } from '../helpers/paritySuite.js'

inClusterParitySuite()

const dataDir = tempDataDir('batch')
let server = await startInProcess(dataDir)
t.teardown(() => server.stop())
const { token } = await server.client.createTenant('acme')
const batch = (items: unknown, query: Record<string, string> = { token }) => server.client.request('POST', '/v1/batch', { tenant: 'acme', query, body: items })
const countProjects = async (filterName?: string) => {
  const list = await server.client.request('GET', '/v1/time/projects', { tenant: 'acme', query: { token, $top: 1000 } })
  return (list.json as { name: string }[]).filter((project) => filterName === undefined || project.name.startsWith(filterName)).length
}

t.test('mixed reads and writes, in order, with a failing item among successes', async (t) => {
  const response = await batch([
    { id: 'a', method: 'POST', path: '/v1/time/projects', body: JSON.stringify({ name: 'batch-a' }) },
    { id: 'count', method: 'GET', path: '/v1/time/projects/$count' },
    { id: 'bad', method: 'POST', path: '/v1/time/projects', body: JSON.stringify({ name: 'batch-bad', code: 'x'.repeat(30) }) },
    { id: 'b', method: 'POST', path: '/v1/time/projects?response_object=true', body: JSON.stringify({ name: 'batch-b' }) },
    { id: 'missing', method: 'GET', path: '/v1/time/projects/nope' },
  ])
  t.equal(response.status, 200)
  const answers = response.json as { id: string; code: number; headers: string; body: string }[]
  t.same(
    answers.map((answer) => [answer.id, answer.code]),
    [
      ['a', 201],
      ['count', 200],
      ['bad', 412],
      ['b', 201],
      ['missing', 404],
    ],
  )
  t.equal(answers[1]?.body, '1', 'a read sees the earlier write of the same batch')
  t.equal(JSON.parse(answers[2]?.body ?? '{}').code, 'TL01-1104')
  t.equal(JSON.parse(answers[3]?.body ?? '{}').name, 'batch-b')
  t.match(answers[0]?.headers, /Content-Type: application\/json/)
  t.equal(await countProjects('batch-'), 2)
})

t.test('a transaction group with a failure leaves no trace, also after a restart', async (t) => {
  const response = await batch([
    { id: 'g1', method: 'POST', path: '/v1/time/projects', body: JSON.stringify({ name: 'tx-1' }), transaction: 'T' },
    { id: 'solo', method: 'POST', path: '/v1/time/projects', body: JSON.stringify({ name: 'tx-solo' }) },
    { id: 'g2', method: 'POST', path: '/v1/time/projects', body: JSON.stringify({ name: 'tx-2', client: { id: '00000000-0000-4000-8000-000000000000' } }), transaction: 'T' },
    { id: 'g3', method: 'POST', path: '/v1/time/projects', body: JSON.stringify({ name: 'tx-3' }), transaction: 'T' },
    { id: 'u1', method: 'POST', path: '/v1/time/projects', body: JSON.stringify({ name: 'ok-1' }), transaction: 'U' },
    { id: 'u2', method: 'POST', path: '/v1/time/projects', body: JSON.stringify({ name: 'ok-2' }), transaction: 'U' },
  ])
  const answers = response.json as { id: string; code: number; body: string }[]
  t.same(
    answers.map((answer) => [answer.id, answer.code]),
    [
      ['g1', 424],
      ['solo', 201],
      ['g2', 412],
      ['g3', 424],
      ['u1', 201],
      ['u2', 201],
    ],
  )
  t.equal(JSON.parse(answers[0]?.body ?? '{}').code, 'TL01-1108')
  t.equal(await countProjects('tx-'), 1, 'only the item outside the group was applied')
  t.equal(await countProjects('ok-'), 2)
  await server.stop()
  server = await startInProcess(dataDir)
  t.equal(await countProjects('tx-'), 1, 'still so after a restart')
  t.equal(await countProjects('ok-'), 2)
})

t.test('tokens and headers per item; limits', async (t) => {
  const response = await batch([
    { id: 'no-token', method: 'GET', path: '/v1/time/projects/$count?token=wrong' },
    { id: 'xml', method: 'GET', path: '/v1/time/projects', headers: 'Accept: application/xml\nX-Other: 1' },
    { id: 'nested', method: 'POST', path: '/v1/batch', body: '[]' },
  ])
  const answers = response.json as { id: string; code: number; headers: string; body: string }[]
  t.equal(answers[0]?.code, 401, "an item's own token wins over the batch token")
  t.match(answers[1]?.body, /^<\?xml/, 'item header lines apply')
  t.match(answers[1]?.headers, /application\/xml/)
  t.equal(answers[2]?.code, 400, 'nested batches are refused')
  const tooMany = await batch(Array.from({ length: 101 }, (_, index) => ({ id: String(index), method: 'GET', path: '/v1/time/projects/$count' })))
  t.equal(tooMany.status, 412)
  t.equal(tooMany.json.code, 'TL01-9002')
  const exactly100 = await batch(Array.from({ length: 100 }, (_, index) => ({ id: String(index), method: 'GET', path: '/v1/time/projects/$count' })))
  t.equal(exactly100.status, 200)
  t.equal(exactly100.json.length, 100)
  t.equal((await batch({ not: 'an array' })).status, 400)
  t.equal((await batch([{ id: 'x' }])).status, 400)
  t.equal((await batch([], {})).status, 400, 'the batch itself needs a token')
})

t.test("an item without headers takes the batch request's headers", async (t) => {
  const response = await server.client.request('POST', '/v1/batch', {
    tenant: 'acme',
    // format=json keeps the batch answer itself in JSON; the items see only the headers.
    query: { token, format: 'json' },
    headers: { accept: 'application/xml' },
    body: [
      { id: 'inherits', method: 'GET', path: '/v1/users/@self' },
      { id: 'own', method: 'GET', path: '/v1/users/@self', headers: 'Accept: application/json' },
    ],
  })
  t.equal(response.status, 200)
  const answers = response.json as { id: string; code: number; headers: string; body: string }[]
  t.equal(answers[0]?.code, 200)
  t.match(answers[0]?.body, /^<\?xml/, "no headers: the batch's Accept: application/xml applies")
  t.match(answers[0]?.headers, /Content-Type: application\/xml/)
  t.equal(answers[1]?.code, 200)
  t.equal(JSON.parse(answers[1]?.body ?? 'null')?.email, 'owner@acme.test', 'its own headers: JSON')
})

t.test("an item whose path carries another user's token runs as that user", async (t) => {
  const owner = api(server.client, 'acme', token)
  const petra = await newUser(server.client, 'acme', owner, 'Petra')
  const ownerId = ((await owner.get('users/@self')).json as { id: string }).id
  const record = JSON.stringify({ user: { id: ownerId }, duration: 60_000 })
  const response = await batch([
    { id: 'batch-token', method: 'GET', path: '/v1/users/@self' },
    { id: 'petra', method: 'GET', path: `/v1/users/@self?token=${petra.api.token}` },
    { id: 'petra-writes', method: 'POST', path: `/v1/time/timerecords?token=${petra.api.token}`, body: record },
    { id: 'owner-writes', method: 'POST', path: '/v1/time/timerecords', body: record },
  ])
  const answers = response.json as { id: string; code: number; body: string }[]
  t.equal(JSON.parse(answers[0]?.body ?? '{}').id, ownerId, 'the batch token: the owner')
  t.equal(JSON.parse(answers[1]?.body ?? '{}').id, petra.id, "the item's token: Petra")
  t.equal(answers[2]?.code, 403, "Petra may not write the owner's time record")
  t.equal(JSON.parse(answers[2]?.body ?? '{}').code, 'TL01-1008')
  t.equal(answers[3]?.code, 201, 'the owner may')
})

// It reads the tenant's actor in this process: through a cluster (TIMELEDGER_TEST_CLUSTER=1) the tenant may live on the other node.
const ACTOR_HERE = process.env.TIMELEDGER_TEST_CLUSTER === '1' ? { skip: 'reads the tenant actor of one node of the cluster' } : {}

t.test('a batch of 100 creations is one log entry, one commit', ACTOR_HERE, async (t) => {
  const actor = server.service.services.registry.get('acme')
  if (actor === undefined) throw new Error('no tenant acme')
  const ownerId = ((await server.client.request('GET', '/v1/users/@self', { tenant: 'acme', query: { token } })).json as { id: string }).id
  const seqBefore = actor.state.seq
  const response = await batch(
    Array.from({ length: 100 }, (_, index) => ({
      id: String(index),
      method: 'POST',
      path: '/v1/time/timerecords',
      body: JSON.stringify({ user: { id: ownerId }, duration: index * 1000, description: `batch-${index}` }),
    })),
  )
  const answers = response.json as { code: number }[]
  t.equal(answers.filter((answer) => answer.code === 201).length, 100, 'all 100 created')
  t.equal(actor.state.seq, seqBefore + 1, 'the log advanced by exactly one entry')
  const count = await server.client.request('GET', '/v1/time/timerecords/$count', { tenant: 'acme', query: { token, $filter: "startswith(description, 'batch-')" } })
  t.equal(count.json, 100)
})

t.test('items refused before routing carry a Content-Type header line like other error answers', async (t) => {
  const response = await batch([
    { id: 'nested', method: 'POST', path: '/v1/batch', body: '[]' },
    { id: 'unversioned', method: 'GET', path: '/time/projects' },
    { id: 'routed', method: 'GET', path: '/v1/no/such/path' },
  ])
  const answers = response.json as { id: string; code: number; headers: string; body: string }[]
  t.same(
    answers.map((answer) => [answer.id, answer.code]),
    [
      ['nested', 400],
      ['unversioned', 404],
      ['routed', 404],
    ],
  )
  for (const answer of answers) {
    t.match(answer.headers, /^Content-Type: application\/json; charset=utf-8$/m, `${answer.id}: a Content-Type header line`)
    t.match(JSON.parse(answer.body), { status: answer.code, code: String }, `${answer.id}: an error body`)
  }
  t.equal(JSON.parse(answers[0]?.body ?? '{}').code, 'TL01-1103')
  t.equal(JSON.parse(answers[1]?.body ?? '{}').code, 'TL01-9003')
})

t.test('a crash during batches never leaves half a transaction group', async (t) => {
  const crashDir = tempDataDir('batch-crash')
  let child = await spawnServer(crashDir)
  const tenant = await child.client.createTenant('crash')
  const GROUP_SIZE = 5
  for (let round = 0; round < 5; round += 1) {
    let stop = false
    const sender = (async () => {
      for (let index = 0; !stop; index += 1) {
        const items = Array.from({ length: GROUP_SIZE }, (_, member) => ({
          id: `${member}`,
          method: 'POST',
          path: '/v1/time/projects',
          body: JSON.stringify({ name: `g-${round}-${index}` }),
          transaction: 'group',
        }))
        try {
          const response = await child.client.request('POST', '/v1/batch', { tenant: 'crash', query: { token: tenant.token }, body: items, timeoutMs: 5000 })
          if (response.status !== 200) return
        } catch {
          return
        }
      }
    })()
    await new Promise((resolve) => setTimeout(resolve, 50 + Math.random() * 250))
    await killHard(child)
    stop = true
    await sender
    child = await spawnServer(crashDir)
    const list = await child.client.request('GET', '/v1/time/projects', { tenant: 'crash', query: { token: tenant.token, $top: 1000, $skip: 0 } })
    const sizes = new Map<string, number>()
    for (let skip = 0; ; skip += 1000) {
      const page = skip === 0 ? list : await child.client.request('GET', '/v1/time/projects', { tenant: 'crash', query: { token: tenant.token, $top: 1000, $skip: skip } })
      for (const project of page.json as { name: string }[]) sizes.set(project.name, (sizes.get(project.name) ?? 0) + 1)
      if ((page.json as unknown[]).length < 1000) break
    }
    const partial = [...sizes.values()].filter((size) => size !== GROUP_SIZE).length
    t.equal(partial, 0, `round ${round}: every group is whole (${sizes.size} groups)`)
  }
  await killHard(child)
})
