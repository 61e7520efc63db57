/*
 * The real TimeLedger server as a child process for the benchmark:
 * `node [--cpu-prof …] dist/src/cli.js serve` with PORT=0 on a given
 * DATA_DIR, started like the tests start it (test/helpers/server.ts) and
 * ready when it prints `listening on http://<host>:<port>`. The time from
 * spawn to that line is its start-up time. The request rate limit is turned
 * off (RATE_LIMIT_REQUESTS=0): a load generator is one user sending far more
 * than 500 requests per 10 s. rssBytes() reads the child's resident memory
 * from /proc. stop() sends SIGTERM (a clean stop snapshots active tenants,
 * which takes seconds for a large tenant) and waits for the exit.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import { fileURLToPath } from 'node:url'

export const BENCH_API_KEY = 'bench-api-key'
const CLI = fileURLToPath(new URL('../src/cli.js', import.meta.url))

export interface ServerOptions {
  dataDir: string
  /** Extra environment (overrides the defaults below). */
  env?: Record<string, string>
  /** Folder for a CPU profile (`--cpu-prof`), written when the server exits. */
  cpuProfileDir?: string
  readyTimeoutMs?: number
  /** The compiled CLI to run (default: this tree's dist/src/cli.js), e.g. an older build for an A/B. */
  cli?: string
  /** Options for node itself (V8 flags that NODE_OPTIONS does not take, such as --no-turbo-inlining). */
  nodeArgs?: readonly string[]
}

export interface BenchServer {
  port: number
  pid: number
  startupMs: number
  rssBytes(): number
  /** Everything the server printed (stdout and stderr). */
  output(): string
  stop(timeoutMs?: number): Promise<void>
}

/** Server settings that turn automatic snapshots off, so that none lands in the middle of a measurement. */
export const NO_AUTO_SNAPSHOTS: Readonly<Record<string, string>> = { SNAPSHOT_EVERY_COMMANDS: '1000000000', SNAPSHOT_EVERY_LOG_BYTES: '1000000000000' }

/**
 * Server settings that turn the change feed's limits off, for the runs that measure its fan-out with many
 * subscribers per user and the subscribers' own pace (its limits and budget are tested in test/api/changesLimits.test.ts
 * and changesMemory.test.ts).
 */
export const UNLIMITED_FEED: Readonly<Record<string, string>> = {
  CHANGE_FEED_MAX_SUBSCRIPTIONS_PER_USER: '0',
  CHANGE_FEED_MAX_SUBSCRIPTIONS_PER_TENANT: '0',
  CHANGE_FEED_MAX_SUBSCRIPTIONS_PER_NODE: '0',
  CHANGE_FEED_MAX_BUFFERED_BYTES_PER_NODE: '0',
}

export function serverEnv(dataDir: string, extra: Record<string, string> = {}): Record<string, string> {
  return { PORT: '0', ADMIN_PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, API_KEYS: BENCH_API_KEY, RATE_LIMIT_REQUESTS: '0', QUIET: '1', ...extra }
}

function readRss(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8')
  const match = /^VmRSS:\s+(\d+) kB/m.exec(status)
  return match === null ? 0 : Number(match[1]) * 1024
}

function waitForPort(child: ChildProcess, output: () => string, timeoutMs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error(`server did not start within ${timeoutMs} ms:\n${output()}`)), timeoutMs)
    const check = () => {
      const match = /listening on http:\/\/[\d.]+:(\d+)/.exec(output())
      if (match === null) return
      clearTimeout(timer)
      child.off('exit', onExit)
      resolve(Number(match[1]))
    }
    const onExit = (code: number | null) => fail(new Error(`server exited with ${code} before listening:\n${output()}`))
    const fail = (error: Error) => {
      clearTimeout(timer)
      child.kill('SIGKILL')
      reject(error)
    }
    child.stdout?.on('data', check)
    child.once('exit', onExit)
  })
}

export async function startServer(options: ServerOptions): Promise<BenchServer> {
  const nodeArgs = [...(options.nodeArgs ?? []), ...(options.cpuProfileDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${options.cpuProfileDir}`])]
  const started = performance.now()
  const child = spawn(process.execPath, [...nodeArgs, options.cli ?? CLI, 'serve'], {
    env: { ...process.env, ...serverEnv(options.dataDir, options.env) },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let text = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (text += chunk))
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (text += chunk))
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const port = await waitForPort(child, () => text, options.readyTimeoutMs ?? 60_000)
  const startupMs = performance.now() - started
  const pid = child.pid as number
  return {
    port,
    pid,
    startupMs,
    rssBytes: () => readRss(pid),
    output: () => text,
    stop: async (timeoutMs = 120_000) => {
      if (child.exitCode !== null || child.signalCode !== null) return
      child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
      await exited
      clearTimeout(timer)
    },
  }
}
