/*
 * Crash consistency of the walking skeleton: a server in a child process
 * takes a stream of concurrent writes and is killed with SIGKILL at a random
 * moment, again and again; after every restart each write that had been
 * acknowledged is there, and the tenant still serves. CRASH_ROUNDS sets the
 * number of kills (default 20).
 */
import t from 'tap'
import { killHard, spawnServer, tempDataDir, type ChildServer } from './helpers/server.js'

const ROUNDS = Number(process.env.CRASH_ROUNDS ?? 20)
const WRITERS = 6
const dataDir = tempDataDir('crash')
const acknowledged = new Map<string, number>()

async function writeUntilKilled(server: ChildServer, token: string, round: number): Promise<void> {
  const writer = async (writerId: number) => {
    for (let index = 0; ; index += 1) {
      const name = `r${round}-w${writerId}-${index}`
      let response
      try {
        response = await server.client.request('POST', '/v1/time/projects', { tenant: 'crash', query: { token }, body: { name, timeBudget: index }, timeoutMs: 5000 })
      } catch {
        return
      }
      if (response.status !== 201) return
      acknowledged.set(response.json.id as string, index)
    }
  }
  await Promise.all(Array.from({ length: WRITERS }, (_, writerId) => writer(writerId)))
}

t.test(`SIGKILL ${ROUNDS} times under concurrent writes loses no acknowledged write`, async (t) => {
  let server = await spawnServer(dataDir, { SNAPSHOT_EVERY_COMMANDS: '300' })
  const { token } = await server.client.createTenant('crash')
  for (let round = 0; round < ROUNDS; round += 1) {
    const writing = writeUntilKilled(server, token, round)
    await new Promise((resolve) => setTimeout(resolve, 30 + Math.random() * 400))
    await killHard(server)
    await writing
    server = await spawnServer(dataDir, { SNAPSHOT_EVERY_COMMANDS: '300' })
    const count = await server.client.request('GET', '/v1/time/projects/$count', { tenant: 'crash', query: { token } })
    t.equal(count.status, 200, `round ${round}: the tenant serves after restart`)
    const stored = new Map<string, number>()
    for (let skip = 0; ; skip += 1000) {
      const page = await server.client.request('GET', '/v1/time/projects', { tenant: 'crash', query: { token, $top: 1000, $skip: skip, no_expand: true } })
      for (const project of page.json as { id: string; timeBudget: number }[]) stored.set(project.id, project.timeBudget)
      if ((page.json as unknown[]).length < 1000) break
    }
    let lost = 0
    for (const [id, budget] of acknowledged) if (stored.get(id) !== budget) lost += 1
    t.equal(lost, 0, `round ${round}: all ${acknowledged.size} acknowledged writes survived (stored ${stored.size})`)
    t.ok(stored.size >= acknowledged.size, 'nothing acknowledged is missing')
  }
  await killHard(server)
  t.ok(acknowledged.size > ROUNDS, `writes were acknowledged across rounds (${acknowledged.size})`)
})
