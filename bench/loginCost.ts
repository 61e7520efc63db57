/*
 * The cost of a login (issue: password hashing), before and after the move
 * from scrypt N=2^14 to Argon2id at OWASP's minimum (m=19456 KiB, t=2, p=1).
 *
 * 1. One password check, in this process, one at a time: scrypt N=16384
 *    r=8 p=1 as the service ran it before (one scrypt call: a check and a
 *    new hash cost the same), Argon2id verify and hash at the current cost
 *    through credentials.ts, and the first login of a user whose hash is
 *    still scrypt (scrypt check + Argon2id re-hash). The kinds are run in
 *    turn, round by round, so they share the machine's minutes; medians
 *    and p90 in ms.
 * 2. Logins over HTTP: `GET /v1/auth/login` with Basic auth (a right
 *    password, then a token write), 8 connections (the load scenario's
 *    cap), against a fresh server per run: the build given with `--before`
 *    (an older tree compiled elsewhere, scrypt N=16384) and this tree's
 *    (Argon2id at the defaults), alternated `--rounds` times. Logins per
 *    second and the server's CPU per login (/proc), with the ratio
 *    after / before.
 *
 *   node dist/bench/loginCost.js [--before /tmp/tl-before/dist/src/cli.js]
 *     [--checks 30] [--duration 10] [--rounds 2]
 * Without --before only this tree's server is measured over HTTP.
 */
import crypto from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { checkPassword, hashPassword, OWASP_PASSWORD_COST } from '../src/domain/credentials.js'
import { scriptArgs } from './cliOptions.js'
import { basicAuth, BenchClient, hostOf, withQuery } from './httpClient.js'
import { runLoad } from './loadgen.js'
import { signUpAndLogin } from './mixedLoad.js'
import { withCpuPerRequest } from './processCpu.js'
import { BENCH_API_KEY, startServer } from './serverProcess.js'

const scrypt = promisify(crypto.scrypt) as (password: string, salt: Buffer, keylen: number, options: crypto.ScryptOptions) => Promise<Buffer>
const PASSWORD = 'bench-password'
const SCRYPT_N = 16_384
const LOGIN_CONNECTIONS = 8

function scryptHashOfBefore(password: string): string {
  const salt = crypto.randomBytes(16)
  const hash = crypto.scryptSync(password, salt, 32, { N: SCRYPT_N, r: 8, p: 1, maxmem: 256 * SCRYPT_N * 8 })
  return `scrypt$${SCRYPT_N}$${salt.toString('base64url')}$${hash.toString('base64url')}`
}

function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number
}

async function timed(run: () => Promise<unknown>): Promise<number> {
  const started = performance.now()
  await run()
  return performance.now() - started
}

async function measureChecks(rounds: number): Promise<void> {
  const scryptStored = scryptHashOfBefore(PASSWORD)
  const argonStored = await hashPassword(PASSWORD, OWASP_PASSWORD_COST)
  const salt = crypto.randomBytes(16)
  const kinds: [string, () => Promise<unknown>][] = [
    ['scrypt N=16384 (before): check or hash', () => scrypt(PASSWORD, salt, 32, { N: SCRYPT_N, r: 8, p: 1, maxmem: 256 * SCRYPT_N * 8 })],
    [
      'Argon2id m=19456 t=2 p=1 (after): check',
      async () => {
        if (!(await checkPassword(PASSWORD, argonStored, OWASP_PASSWORD_COST)).matches) throw new Error('the Argon2id check failed')
      },
    ],
    ['Argon2id m=19456 t=2 p=1 (after): hash', () => hashPassword(PASSWORD, OWASP_PASSWORD_COST)],
    [
      'first login of a scrypt user (check + re-hash)',
      async () => {
        if ((await checkPassword(PASSWORD, scryptStored, OWASP_PASSWORD_COST)).rehashed === null) throw new Error('no re-hash')
      },
    ],
  ]
  const times = kinds.map(() => [] as number[])
  for (let round = -3; round < rounds; round += 1) {
    for (const [index, [, run]] of kinds.entries()) {
      const ms = await timed(run)
      if (round >= 0) times[index]?.push(ms)
    }
  }
  console.log(`\n### One password check at a time (${rounds} rounds after 3 warm-up rounds)\n`)
  console.log('| what | median ms | p90 ms | median × scrypt |')
  console.log('| --- | --- | --- | --- |')
  const baseline = quantile(times[0] ?? [], 0.5)
  for (const [index, [label]] of kinds.entries()) {
    const median = quantile(times[index] ?? [], 0.5)
    console.log(`| ${label} | ${median.toFixed(1)} | ${quantile(times[index] ?? [], 0.9).toFixed(1)} | ${(median / baseline).toFixed(2)} |`)
  }
}

interface LoginRun {
  label: string
  requestsPerSecond: number
  cpuMsPerLogin: number | null
  p50Ms: number
  p99Ms: number
  non2xx: number
}

async function measureLogins(label: string, cli: string | undefined, durationSeconds: number): Promise<LoginRun> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-login-'))
  const server = await startServer(cli === undefined ? { dataDir } : { dataDir, cli })
  try {
    const client = new BenchClient(server.port)
    await signUpAndLogin(client, 'logins')
    client.close()
    const load = {
      url: `http://127.0.0.1:${server.port}${withQuery('/v1/auth/login', { apikey: BENCH_API_KEY })}`,
      method: 'GET',
      headers: { host: hostOf('logins', server.port), authorization: basicAuth('owner@logins.test', PASSWORD) },
      connections: LOGIN_CONNECTIONS,
    }
    await runLoad({ ...load, durationSeconds: 1 })
    const result = await withCpuPerRequest(server.pid, () => runLoad({ ...load, durationSeconds }))
    const cpuMsPerLogin = result.cpuMicrosPerRequest === null ? null : result.cpuMicrosPerRequest / 1000
    return { label, requestsPerSecond: result.requestsPerSecond, cpuMsPerLogin, p50Ms: result.p50Ms, p99Ms: result.p99Ms, non2xx: result.non2xx + result.errors }
  } finally {
    await server.stop()
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
}

async function main(): Promise<void> {
  const args = scriptArgs({
    usage: 'node dist/bench/loginCost.js [options]',
    about: 'The cost of a login: one password check in process (scrypt before, Argon2id now), then logins over HTTP against\nthe build given with --before and this one, alternated.',
    options: {
      before: { value: 'path/to/cli.js', help: 'an older build (scrypt) to measure beside this one (default: only this one over HTTP)' },
      checks: { value: 'n', help: 'password checks per kind, in process (default 30)' },
      duration: { value: 's', help: 'seconds of logins per run (default 10)' },
      rounds: { value: 'n', help: 'rounds (default 2)' },
    },
  })
  const before = args.text('before')
  const checks = args.positiveInteger('checks', 30)
  const durationSeconds = args.positiveInteger('duration', 10)
  const rounds = args.positiveInteger('rounds', 2)
  console.log(
    `# Login cost, ${new Date().toISOString()}; ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'CPU'}, Node ${process.version}, UV_THREADPOOL_SIZE=${process.env.UV_THREADPOOL_SIZE ?? '4 (default)'}`,
  )
  await measureChecks(checks)

  const runs: LoginRun[] = []
  for (let round = 0; round < rounds; round += 1) {
    if (before !== undefined) runs.push(await measureLogins('before (scrypt N=16384)', before, durationSeconds))
    runs.push(await measureLogins('after (Argon2id m=19456 t=2 p=1)', undefined, durationSeconds))
  }
  console.log(`\n### Logins over HTTP (${LOGIN_CONNECTIONS} connections, ${durationSeconds} s after 1 s warm-up, a fresh server per run, runs alternated)\n`)
  console.log('| run | logins/s | server CPU ms per login | p50 ms | p99 ms | non-2xx/errors |')
  console.log('| --- | --- | --- | --- | --- | --- |')
  for (const run of runs) {
    console.log(`| ${run.label} | ${run.requestsPerSecond.toFixed(1)} | ${run.cpuMsPerLogin?.toFixed(1) ?? 'n/a'} | ${run.p50Ms.toFixed(0)} | ${run.p99Ms.toFixed(0)} | ${run.non2xx} |`)
  }
  const mean = (label: string, pick: (run: LoginRun) => number | null) => {
    const values = runs
      .filter((run) => run.label.startsWith(label))
      .map(pick)
      .filter((value): value is number => value !== null)
    return values.length === 0 ? null : values.reduce((sum, value) => sum + value, 0) / values.length
  }
  const rateBefore = mean('before', (run) => run.requestsPerSecond)
  const rateAfter = mean('after', (run) => run.requestsPerSecond)
  const cpuBefore = mean('before', (run) => run.cpuMsPerLogin)
  const cpuAfter = mean('after', (run) => run.cpuMsPerLogin)
  if (rateBefore !== null && rateAfter !== null) console.log(`\nlogins/s after / before: ${(rateAfter / rateBefore).toFixed(2)}`)
  if (cpuBefore !== null && cpuAfter !== null) console.log(`server CPU per login after / before: ${(cpuAfter / cpuBefore).toFixed(2)}`)
}

await main()
