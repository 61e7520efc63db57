/*
 * The cost of an import (issue 43): a Toggl Track detailed report of
 * 100,000 rows (by default) — 20 users, 50 clients, 500 projects, 1500
 * tasks, 30 tags, descriptions with commas and quotes, two years of dates —
 * posted to `POST /v1/import/toggl`, first as a dry run, then for real, on a
 * server process of its own (serverProcess.ts, automatic snapshots off) on
 * a fresh data directory per round.
 *
 * Figures: the file's size; per call the wall time, the server's CPU time
 * (user + system, /proc) and its peak RSS above what it held before the
 * call (rssSampler.ts), and its RSS after; the longest answer a GET of
 * another tenant got while the import ran (one every PING_MS: the import
 * decides in slices, so the other tenants go on); then the server
 * restarted, and the time of the login and first read of the tenant, which
 * replay the import's one log entry.
 *
 *   node dist/bench/imports.js [--rows 100000] [--rounds 2] [--cpu-profile-dir <dir>]
 *
 * `--cpu-profile-dir` runs the servers with `--cpu-prof` (profileSummary.js
 * summarizes a profile).
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { scriptArgs } from './cliOptions.js'
import { BENCH_API_KEY, NO_AUTO_SNAPSHOTS, startServer, type BenchServer } from './serverProcess.js'
import { pollSelf } from './selfPoller.js'
import { BenchClient, basicAuth, withQuery } from './httpClient.js'
import { processCpuMicros } from './processCpu.js'
import { seededRandom } from './dataset.js'
import { rssOf, rssSampler } from './rssSampler.js'

const PING_MS = 20
const USERS = 20
const CLIENTS = 50
const PROJECTS = 500
const TASKS_PER_PROJECT = 3
const TAGS = 30
const PASSWORD = 'bench-password'

const quoted = (text: string) => (/[",\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text)
const two = (value: number) => String(value).padStart(2, '0')
const clock = (ms: number) => `${two(Math.floor(ms / 3_600_000))}:${two(Math.floor(ms / 60_000) % 60)}:${two(Math.floor(ms / 1000) % 60)}`

/** The Toggl Track detailed report CSV of `rows` rows for `tenant`'s users. */
function togglFile(rows: number, tenant: string): string {
  // Seeded: every round imports the same file.
  const next = seededRandom(43)
  const pick = (count: number) => Math.floor(next() * count)
  const lines = ['User,Email,Client,Project,Task,Description,Billable,Start date,Start time,End date,End time,Duration,Tags,Amount (USD)']
  const firstDay = Date.UTC(2024, 0, 1)
  for (let row = 0; row < rows; row += 1) {
    const user = pick(USERS)
    const project = pick(PROJECTS)
    const client = project % CLIENTS
    const task = next() < 0.6 ? `Task ${project}-${pick(TASKS_PER_PROJECT)}` : ''
    const description = next() < 0.3 ? `Review, "round" ${row % 97}` : `Work item ${row % 997}`
    const startMs = firstDay + pick(730) * 86_400_000 + (7 * 3_600_000 + pick(600) * 60_000)
    const durationMs = (5 + pick(480)) * 60_000
    const start = new Date(startMs).toISOString()
    const end = new Date(startMs + durationMs).toISOString()
    const tags = Array.from({ length: pick(3) }, () => `tag-${pick(TAGS)}`).join(', ')
    lines.push(
      [
        `User ${user}`,
        `user${user}@${tenant}.test`,
        `Client ${client}`,
        `Project ${project}`,
        task,
        quoted(description),
        next() < 0.7 ? 'Yes' : 'No',
        start.slice(0, 10),
        start.slice(11, 19),
        end.slice(0, 10),
        end.slice(11, 19),
        clock(durationMs),
        quoted(tags),
        '0.00',
      ].join(','),
    )
  }
  return `${lines.join('\n')}\n`
}

async function signUp(client: BenchClient, tenant: string): Promise<string> {
  const email = `user0@${tenant}.test`
  const signup = await client.expect(201, 'POST', withQuery('/v1/register/signup', { apikey: BENCH_API_KEY }), {
    body: JSON.stringify({ account: { name: tenant, urlPrefix: tenant }, owner: { firstName: 'User', lastName: '0', email, password: PASSWORD } }),
  })
  await client.expect(200, 'POST', withQuery(`/v1/auth/confirm/${signup.json.id}`, { apikey: BENCH_API_KEY }), { tenant })
  return login(client, tenant, email)
}

async function login(client: BenchClient, tenant: string, email: string): Promise<string> {
  const answer = await client.expect(200, 'GET', withQuery('/v1/auth/login', { apikey: BENCH_API_KEY }), { tenant, headers: { authorization: basicAuth(email, PASSWORD) } })
  return answer.json.token as string
}

interface Call {
  status: number
  ms: number
  cpuMs: number
  peakAboveMb: number
  rssAfterMb: number
  longestNeighbourMs: number
  neighbourGets: number
  answer: Record<string, unknown>
}

async function timedImport(server: BenchServer, tenant: string, token: string, neighbour: { tenant: string; token: string }, file: string, dryRun: boolean): Promise<Call> {
  const client = new BenchClient(server.port)
  try {
    const before = rssOf(server.pid)
    const cpuBefore = processCpuMicros(server.pid) ?? 0
    const peak = rssSampler(server.pid)
    const stopPing = pollSelf(server.port, neighbour.tenant, neighbour.token, PING_MS)
    const answer = await client.request('POST', withQuery('/v1/import/toggl', { token, dry_run: String(dryRun), preview: 0 }), { tenant, body: file, headers: { 'content-type': 'text/csv' } })
    const ping = await stopPing()
    const peakRss = peak()
    const cpuMs = ((processCpuMicros(server.pid) ?? 0) - cpuBefore) / 1000
    if (answer.status !== (dryRun ? 200 : 201)) throw new Error(`import answered ${answer.status}: ${answer.text.slice(0, 500)}`)
    return {
      status: answer.status,
      ms: answer.ms,
      cpuMs,
      peakAboveMb: (peakRss - before) / 2 ** 20,
      rssAfterMb: rssOf(server.pid) / 2 ** 20,
      longestNeighbourMs: ping.longestMs,
      neighbourGets: ping.count,
      answer: answer.json,
    }
  } finally {
    client.close()
  }
}

const args = scriptArgs({
  usage: 'node dist/bench/imports.js [options]',
  about:
    "The cost of an import: a Toggl Track detailed report posted to POST /v1/import/toggl, as a dry run and for real\n(wall time, server CPU, peak RSS, the longest GET of another tenant meanwhile), then the tenant's activation after a\nrestart; a fresh server and data directory each round.",
  options: {
    rows: { value: 'n', help: 'rows of the file (default 100000)' },
    rounds: { value: 'n', help: 'rounds (default 2)' },
    'cpu-profile-dir': { value: 'dir', help: 'run the servers with --cpu-prof, the profiles in <dir>' },
  },
})
const rows = args.positiveInteger('rows', 100_000)
const rounds = args.positiveInteger('rounds', 2)
const cpuProfileDir = args.text('cpu-profile-dir')
const tenant = 'movein'
const file = togglFile(rows, tenant)
console.log(`${rows} rows of a Toggl Track detailed report: ${(Buffer.byteLength(file) / 2 ** 20).toFixed(1)} MB; ${rounds} round(s), a fresh server and data directory each`)
console.log('| round | call | status | wall ms | server CPU ms | peak RSS above before, MB | RSS after, MB | longest GET of another tenant meanwhile, ms (GETs) |')
console.log('|---|---|---|---|---|---|---|---|')
const restarts: string[] = []
for (let round = 1; round <= rounds; round += 1) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'timeledger-bench-imports-'))
  const env = { ...NO_AUTO_SNAPSHOTS, MAX_IMPORT_BYTES: String(Math.max(32 * 2 ** 20, Buffer.byteLength(file) + 1)) }
  let server = await startServer({ dataDir, env, ...(cpuProfileDir === undefined ? {} : { cpuProfileDir }) })
  try {
    const client = new BenchClient(server.port)
    const token = await signUp(client, tenant)
    for (let user = 1; user < USERS; user += 1) {
      await client.expect(201, 'POST', withQuery('/v1/users', { token }), {
        tenant,
        body: JSON.stringify({ firstName: 'User', lastName: String(user), email: `user${user}@${tenant}.test`, password: PASSWORD }),
      })
    }
    const neighbour = { tenant: 'neighbour', token: await signUp(client, 'neighbour') }
    client.close()
    for (const dryRun of [true, false]) {
      const call = await timedImport(server, tenant, token, neighbour, file, dryRun)
      console.log(
        `| ${round} | ${dryRun ? 'dry run' : 'import'} | ${call.status} | ${call.ms.toFixed(0)} | ${call.cpuMs.toFixed(0)} | ${call.peakAboveMb.toFixed(1)} | ${call.rssAfterMb.toFixed(0)} | ${call.longestNeighbourMs.toFixed(0)} (${call.neighbourGets}) |`,
      )
      if (!dryRun) console.log(`<!-- ${JSON.stringify({ created: call.answer.created, matched: call.answer.matched })} -->`)
    }
    await server.stop()
    server = await startServer({ dataDir, env, ...(cpuProfileDir === undefined ? {} : { cpuProfileDir }) })
    const again = new BenchClient(server.port)
    const activating = performance.now()
    const newToken = await login(again, tenant, `user0@${tenant}.test`)
    const count = await again.expect(200, 'GET', withQuery('/v1/time/timerecords/$count', { token: newToken }), { tenant })
    const activationMs = performance.now() - activating
    again.close()
    restarts.push(
      `round ${round}: after a restart, the login (which activates the tenant, replaying the import's one log entry) and a $count took ${activationMs.toFixed(0)} ms; ${count.text} records`,
    )
  } finally {
    await server.stop()
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
}
for (const line of restarts) console.log(line)
