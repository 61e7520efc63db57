/*
 * Load generation for the benchmarks. runLoad() drives one URL with a fixed
 * number of connections for a fixed time and returns throughput and latency,
 * tagged with the tool that produced them:
 *   - wrk when it is on PATH (one thread; method/headers/body go in a small
 *     Lua script in a temp dir; its `--latency` text output is parsed), since
 *     autocannon saturates its own core below bare uWS on this machine;
 *   - autocannon's programmatic API otherwise (in this process).
 * wrk's duration is whole seconds; a fractional one (the guard's half-second
 * rounds) lets wrk run a second longer and stops it with SIGINT, on which it
 * prints its figures for the time it ran.
 * Requests are never pipelined: uWS resets a connection when a pipelined
 * request arrives while a reply that waits for the log is pending (ARCHITECTURE.md §7).
 *
 * startProcess()/freePort() spawn a server as a child node process, wait for
 * its `READY <port>` line, and stop it with SIGTERM (SIGKILL after a timeout).
 */
import { spawn, execFile } from 'node:child_process'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'

export type LoadTool = 'wrk' | 'autocannon'

export interface LoadOptions {
  url: string
  method: string
  headers?: Record<string, string>
  body?: string
  /** A fresh body per request (autocannon only; wrk sends `body`). */
  bodies?: () => string
  connections: number
  /** With wrk, a fractional duration (0.5) ends the load with SIGINT (see runWrk). */
  durationSeconds: number
  /** Never pipeline (see above). */
  pipelining?: 1
  /** Force a tool; default: wrk when on PATH, else autocannon. */
  tool?: LoadTool
}

export interface LoadResult {
  tool: LoadTool
  requestsPerSecond: number
  /** Responses received in the measured time. */
  requests: number
  p50Ms: number
  p99Ms: number
  /** Connection/socket errors, including timeouts. */
  errors: number
  non2xx: number
}

export function wrkAvailable(): boolean {
  return (process.env.PATH ?? '').split(path.delimiter).some((dir) => {
    try {
      fs.accessSync(path.join(dir, 'wrk'), fs.constants.X_OK)
      return true
    } catch {
      return false
    }
  })
}

export async function runLoad(opts: LoadOptions): Promise<LoadResult> {
  const tool = opts.tool ?? (wrkAvailable() ? 'wrk' : 'autocannon')
  return tool === 'wrk' ? runWrk(opts) : runAutocannon(opts)
}

// ---------------------------------------------------------------- wrk

async function runWrk(opts: LoadOptions): Promise<LoadResult> {
  if (opts.bodies !== undefined && opts.body === undefined) throw new Error('wrk needs a fixed `body`')
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-wrk-'))
  try {
    const script = path.join(dir, 'request.lua')
    fs.writeFileSync(script, wrkScript(opts))
    // wrk's -d takes whole seconds; a shorter or fractional load runs one second longer and is stopped with SIGINT,
    // on which wrk stops its connections and prints its figures for the time it ran.
    const whole = Number.isInteger(opts.durationSeconds)
    const args = ['-t1', `-c${opts.connections}`, `-d${whole ? opts.durationSeconds : Math.ceil(opts.durationSeconds) + 1}s`, '--latency', '-s', script, opts.url]
    const running = promisify(execFile)('wrk', args, { timeout: (opts.durationSeconds + 30) * 1000 })
    const stop = whole ? undefined : setTimeout(() => running.child.kill('SIGINT'), opts.durationSeconds * 1000)
    const { stdout, stderr } = await running.finally(() => clearTimeout(stop))
    // wrk reports a broken script on stderr and then runs a plain GET anyway.
    if (stderr.trim() !== '') throw new Error(`wrk: ${stderr.trim()}`)
    return parseWrk(stdout)
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

function wrkScript(opts: LoadOptions): string {
  const lines = [`wrk.method = ${luaString(opts.method)}`]
  for (const [name, value] of Object.entries(opts.headers ?? {})) lines.push(`wrk.headers[${luaString(name)}] = ${luaString(value)}`)
  if (opts.body !== undefined) lines.push(`wrk.body = ${luaString(opts.body)}`)
  return `${lines.join('\n')}\n`
}

/**
 * A Lua string literal: quotes, backslashes and bytes outside printable ASCII
 * become three-digit decimal escapes (\034 — a shorter one would swallow a
 * following digit, and wrk silently falls back to GET when its script fails).
 */
function luaString(text: string): string {
  let out = '"'
  for (const byte of Buffer.from(text, 'utf8')) {
    out += byte >= 0x20 && byte < 0x7f && byte !== 0x22 && byte !== 0x5c ? String.fromCharCode(byte) : `\\${String(byte).padStart(3, '0')}`
  }
  return `${out}"`
}

const TIME_UNIT_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000, h: 3_600_000 }

export function parseWrk(output: string): LoadResult {
  const latency = (percent: string): number => {
    const match = new RegExp(`^\\s*${percent}%\\s+([\\d.]+)(us|ms|s|m|h)\\s*$`, 'm').exec(output)
    if (match === null) throw new Error(`wrk output has no ${percent}% latency:\n${output}`)
    const unitMs = TIME_UNIT_MS[match[2] ?? '']
    if (unitMs === undefined) throw new Error(`wrk output has a latency in an unknown unit:\n${output}`)
    return Number(match[1]) * unitMs
  }
  const rps = /^Requests\/sec:\s+([\d.]+)/m.exec(output)
  const total = /^\s*(\d+) requests in /m.exec(output)
  if (rps === null || total === null) throw new Error(`wrk output has no request count:\n${output}`)
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(output)
  const errors = socket === null ? 0 : socket.slice(1).reduce((sum, n) => sum + Number(n), 0)
  const non2xx = /Non-2xx or 3xx responses:\s+(\d+)/.exec(output)
  return {
    tool: 'wrk',
    requestsPerSecond: Number(rps[1]),
    requests: Number(total[1]),
    p50Ms: latency('50'),
    p99Ms: latency('99'),
    errors,
    non2xx: non2xx === null ? 0 : Number(non2xx[1]),
  }
}

// ---------------------------------------------------------------- autocannon

/** The part of autocannon's untyped API used here. */
interface AutocannonResult {
  requests: { total: number }
  duration: number
  errors: number
  non2xx: number
}
interface AutocannonInstance extends PromiseLike<AutocannonResult> {
  on(event: 'response', listener: (client: unknown, statusCode: number, bytes: number, responseTimeMs: number) => void): void
}
type Autocannon = (opts: Record<string, unknown>) => AutocannonInstance

/**
 * Latency percentiles come from the `response` events (high-resolution
 * times): autocannon's own histogram holds whole milliseconds, too coarse
 * for sub-millisecond replies.
 */
async function runAutocannon(opts: LoadOptions): Promise<LoadResult> {
  const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon
  const bodies = opts.bodies
  const instance = autocannon({
    url: opts.url,
    method: opts.method,
    headers: opts.headers ?? {},
    body: opts.body,
    connections: opts.connections,
    duration: opts.durationSeconds,
    pipelining: 1,
    ...(bodies === undefined
      ? {}
      : {
          requests: [{ setupRequest: (request: Record<string, unknown>) => ({ ...request, body: bodies() }) }],
        }),
  })
  const latencies: number[] = []
  instance.on('response', (_client, _status, _bytes, ms) => {
    latencies.push(ms)
  })
  const result = await instance
  const sorted = Float64Array.from(latencies).sort()
  const percentile = (p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0
  return {
    tool: 'autocannon',
    requestsPerSecond: result.requests.total / result.duration,
    requests: result.requests.total,
    p50Ms: percentile(50),
    p99Ms: percentile(99),
    errors: result.errors,
    non2xx: result.non2xx,
  }
}

// ---------------------------------------------------------------- child servers

/** A port that was free a moment ago (the usual small race applies). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      const port = typeof address === 'object' && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })
}

export interface StartedProcess {
  port: number
  pid: number
  stop(): Promise<void>
}

/**
 * Spawns `cmd args` with `env` added to this process's environment and waits
 * for `READY <port>` on its stdout. Later stdout lines go to our stderr.
 */
export async function startProcess(cmd: string, args: readonly string[], env: Record<string, string> = {}, { readyTimeoutMs = 15_000, stopTimeoutMs = 5_000 } = {}): Promise<StartedProcess> {
  const child = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const name = path.basename(args[0] ?? cmd)

  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return
    child.kill('SIGTERM')
    const timer = setTimeout(() => child.kill('SIGKILL'), stopTimeoutMs)
    await exited
    clearTimeout(timer)
  }

  const port = await new Promise<number>((resolve, reject) => {
    let pending = ''
    let settled = false // READY seen, or start-up failed
    const timer = setTimeout(() => fail(new Error(`${name}: no READY line within ${readyTimeoutMs} ms`)), readyTimeoutMs)
    const fail = (error: Error): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      void stop().then(() => reject(error))
    }
    child.once('error', fail)
    child.once('exit', (code, signal) => fail(new Error(`${name} exited before READY (code ${code}, signal ${signal})`)))
    child.stdout.setEncoding('utf8').on('data', (data: string) => {
      if (settled) return void process.stderr.write(`[${name}] ${data}`)
      pending += data
      const match = /^READY (\d+)[ \t]*$/m.exec(pending)
      if (match === null) return
      settled = true
      clearTimeout(timer)
      const rest = pending.slice(match.index + match[0].length).replace(/^\r?\n/, '')
      if (rest !== '') process.stderr.write(`[${name}] ${rest}`)
      resolve(Number(match[1]))
    })
  })
  return { port, pid: child.pid as number, stop }
}
