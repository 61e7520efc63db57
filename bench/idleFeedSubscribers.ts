/*
 * What idle change-feed subscribers cost the writes (issue 37, finding 3:
 * 3,000 idle subscribers raised the write p99 from 33 to 532 ms). The
 * real server runs as a child (serverProcess.ts); `--subscribers` WebSocket
 * subscribers are opened from a process of their own (this file, forked
 * with the role `subscribers`), which reads and drops what comes. Writers
 * (`--writers` keep-alive connections) POST projects with a 1 kB note to
 * tenant `written` for `--duration` seconds; the figure is the write's
 * latency (request sent → answer read), p50/p99/max, and the writes/s, in
 * four placements of the subscribers. Beside them the server's CPU time
 * per write (user + system, processCpu.ts: steadier than latency on a
 * shared machine):
 *
 *   none            no subscriber at all (the baseline)
 *   other tenant    all on tenant `quiet`, which is never written: they should cost nothing
 *   not chosen      on `written`, asking for `resources=time/tags` (no event of these writes is theirs)
 *   every event     on `written`, getting every event (the cost the fan-out has to pay)
 *
 * The subscribers are spread over `--users` users of their tenant (the
 * limits per user, tenant and node are raised for the run), and every
 * placement runs on a fresh server.
 *
 * `--only` runs one placement, `--profile <dir>` writes the server's CPU
 * profile of each placement there.
 *
 *   npx tsc -p . && node dist/bench/idleFeedSubscribers.js [--subscribers 3000] [--users 30] [--writers 16] [--duration 10]
 *     [--only 'every event'] [--profile dir] [--cli …]
 */
import { fork } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import WebSocket from 'ws'
import { scriptArgs } from './cliOptions.js'
import { BenchClient, basicAuth, withQuery } from './httpClient.js'
import { signUpAndLogin } from './mixedLoad.js'
import { processCpuMicros } from './processCpu.js'
import { BENCH_API_KEY, NO_AUTO_SNAPSHOTS, startServer, UNLIMITED_FEED } from './serverProcess.js'

const CONNECT_CONCURRENCY = 100
const NOTE = 'n'.repeat(1000)
interface SubscriberJob {
  port: number
  tenant: string
  tokens: string[]
  count: number
  query: Record<string, string>
}

/** The subscriber process: opens the sockets, says how many opened, keeps them until told to stop. */
async function runSubscribers(): Promise<void> {
  const job = await new Promise<SubscriberJob>((resolve) => process.once('message', (message) => resolve(message as SubscriberJob)))
  const sockets: WebSocket[] = []
  let events = 0
  const openOne = (index: number) =>
    new Promise<void>((resolve, reject) => {
      const query = new URLSearchParams({ token: job.tokens[index % job.tokens.length] as string, ...job.query })
      const socket = new WebSocket(`ws://127.0.0.1:${job.port}/v1/changes?${query.toString()}`, { headers: { host: `${job.tenant}.localhost` }, perMessageDeflate: false, skipUTF8Validation: true })
      socket.on('message', () => (events += 1))
      socket.once('open', () => resolve())
      socket.once('error', reject)
      sockets.push(socket)
    })
  for (let next = 0; next < job.count; next += CONNECT_CONCURRENCY) {
    await Promise.all(Array.from({ length: Math.min(CONNECT_CONCURRENCY, job.count - next) }, (_, offset) => openOne(next + offset)))
  }
  process.send?.({ opened: sockets.length })
  await new Promise((resolve) => process.once('message', resolve))
  for (const socket of sockets) socket.terminate()
  process.send?.({ events })
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0
}

/** Signs up a user of the tenant (by the owner) and logs them in: their token. */
async function userToken(client: BenchClient, tenant: string, ownerToken: string, n: number): Promise<string> {
  const email = `user${n}@${tenant}.test`
  const password = 'bench-password'
  await client.expect(201, 'POST', withQuery('/v1/users', { token: ownerToken }), {
    tenant,
    body: JSON.stringify({ firstName: 'Ida', lastName: `Idle ${n}`, email, password }),
  })
  const login = await client.expect(200, 'GET', withQuery('/v1/auth/login', { apikey: BENCH_API_KEY }), { tenant, headers: { authorization: basicAuth(email, password) } })
  return login.json.token as string
}

type Placement = 'none' | 'other tenant' | 'not chosen' | 'every event'

async function measure(placement: Placement, options: { subscribers: number; users: number; writers: number; durationS: number; cli?: string; profileDir?: string }): Promise<string> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'timeledger-idle-feed-'))
  const server = await startServer({
    dataDir,
    env: { ...NO_AUTO_SNAPSHOTS, ...UNLIMITED_FEED },
    ...(options.cli === undefined ? {} : { cli: options.cli }),
    ...(options.profileDir === undefined ? {} : { cpuProfileDir: path.join(options.profileDir, placement.replace(' ', '-')) }),
  })
  const client = new BenchClient(server.port)
  try {
    const writtenToken = await signUpAndLogin(client, 'written')
    const quietToken = await signUpAndLogin(client, 'quiet')
    let child: ReturnType<typeof fork> | null = null
    if (placement !== 'none') {
      const tenant = placement === 'other tenant' ? 'quiet' : 'written'
      const owner = placement === 'other tenant' ? quietToken : writtenToken
      const tokens: string[] = []
      for (let n = 0; n < options.users; n += 1) tokens.push(await userToken(client, tenant, owner, n))
      child = fork(fileURLToPath(import.meta.url), ['subscribers'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
      const opened = new Promise<{ opened: number }>((resolve) => child?.once('message', (message) => resolve(message as { opened: number })))
      child.send({ port: server.port, tenant, tokens, count: options.subscribers, query: placement === 'not chosen' ? { resources: 'time/tags' } : {} } satisfies SubscriberJob)
      const { opened: count } = await opened
      if (count !== options.subscribers) throw new Error(`${count} of ${options.subscribers} subscribers opened`)
    }
    const rssBefore = server.rssBytes()
    const cpuBefore = processCpuMicros(server.pid) ?? 0
    const latencies: number[] = []
    const until = performance.now() + options.durationS * 1000
    await Promise.all(
      Array.from({ length: options.writers }, async (_, writer) => {
        const own = new BenchClient(server.port)
        for (let n = 0; performance.now() < until; n += 1) {
          const answer = await own.expect(201, 'POST', withQuery('/v1/time/projects', { token: writtenToken }), { tenant: 'written', body: JSON.stringify({ name: `w${writer}-${n}`, note: NOTE }) })
          latencies.push(answer.ms)
        }
        own.close()
      }),
    )
    const cpuMs = ((processCpuMicros(server.pid) ?? 0) - cpuBefore) / 1000
    let events = 0
    if (child !== null) {
      const done = new Promise<{ events: number }>((resolve) => child?.once('message', (message) => resolve(message as { events: number })))
      child.send('stop')
      events = (await done).events
    }
    latencies.sort((a, b) => a - b)
    const rate = latencies.length / options.durationS
    const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(0)
    return `${placement.padEnd(13)} ${String(placement === 'none' ? 0 : options.subscribers).padStart(6)} ${rate.toFixed(0).padStart(8)} ${percentile(latencies, 0.5).toFixed(1).padStart(8)} ${percentile(latencies, 0.99).toFixed(1).padStart(8)} ${(latencies.at(-1) ?? 0).toFixed(1).padStart(8)} ${(cpuMs / latencies.length).toFixed(2).padStart(10)} ${String(events).padStart(9)} ${mb(rssBefore).padStart(6)}`
  } finally {
    client.close()
    await server.stop()
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
}

async function main(): Promise<void> {
  const args = scriptArgs({
    usage: 'node dist/bench/idleFeedSubscribers.js [options]',
    about:
      'What idle change feed subscribers cost the writes: write latency and server CPU per write with none, on a tenant not written, on the written tenant asking for other resources, and getting every event (a fresh server each).',
    options: {
      subscribers: { value: 'n', help: 'WebSocket subscribers (default 3000)' },
      users: { value: 'n', help: 'users of their tenant they are spread over (default 30)' },
      writers: { value: 'n', help: 'keep-alive connections writing (default 16)' },
      duration: { value: 's', help: 'seconds of writes per placement (default 10)' },
      only: { value: 'placement', help: "one placement: 'none', 'other tenant', 'not chosen' or 'every event'" },
      profile: { value: 'dir', help: "writes the server's CPU profile of each placement there" },
      cli: { value: 'file', help: 'the server build to run (default dist/src/cli.js)' },
    },
  })
  const cli = args.text('cli')
  const profileDir = args.text('profile')
  const options = {
    subscribers: args.positiveInteger('subscribers', 3000),
    users: args.positiveInteger('users', 30),
    writers: args.positiveInteger('writers', 16),
    durationS: args.positiveInteger('duration', 10),
    ...(cli === undefined ? {} : { cli: path.resolve(cli) }),
    ...(profileDir === undefined ? {} : { profileDir: path.resolve(profileDir) }),
  }
  const only = args.text('only')
  const placements = (['none', 'other tenant', 'not chosen', 'every event'] as const).filter((placement) => only === undefined || placement === only)
  console.log(`${options.writers} writers for ${options.durationS} s; subscribers spread over ${options.users} users`)
  console.log('placement     subscr.  writes/s   p50 ms   p99 ms   max ms  cpu ms/w    events rss MB')
  for (const placement of placements) console.log(await measure(placement, options))
}

if (process.argv[2] === 'subscribers') await runSubscribers()
else await main()
