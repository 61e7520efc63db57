/*
 * CPU time a server process spent while a load ran, per request answered.
 *
 * Requests per second on a shared two-core VM drift by ±20 % within
 * minutes, because the load generator and the server compete with whatever
 * else runs. The CPU a server spends per request moves far less: it is read
 * from /proc/<pid>/stat (user + system time, in clock ticks) before and
 * after the load, and divided by the requests the load tool counted. Read
 * against the same figure of the bare uWS baseline it says how much more
 * work a TimeLedger request is, whatever the machine was doing meanwhile.
 * Linux only; elsewhere the figure is null.
 *
 * The time is the sum of the process's threads' time on a CPU from
 * /proc/<pid>/task/<tid>/schedstat, in nanoseconds (the scheduler's own
 * count, which the user + system ticks of /proc/<pid>/stat are scaled to
 * anyway); /proc/<pid>/stat's ticks of 10 ms are the fallback where
 * schedstat is missing. The ticks made a short load's figure coarse: a
 * server that gets a tenth of a core for a second on a loaded machine has
 * 10 of them. A thread that exits during the load takes its time with it
 * from the sum; a Node server's threads (main, libuv's pool, V8's workers,
 * LMDB's writer) live as long as it does.
 */
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'

let ticksPerSecond: number | null = null

export function clockTicksPerSecond(): number {
  if (ticksPerSecond === null) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100
    } catch {
      ticksPerSecond = 100
    }
  }
  return ticksPerSecond
}

/** Time on a CPU of the process's live threads so far, in microseconds, from schedstat; null where it is not there. */
function schedstatMicros(pid: number): number | null {
  let nanos = 0
  try {
    for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
      try {
        nanos += Number(fs.readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0])
      } catch {
        // the thread ended between the listing and the read
      }
    }
  } catch {
    return null
  }
  return Number.isFinite(nanos) && nanos > 0 ? nanos / 1000 : null
}

/** User + system CPU time of a process so far, in microseconds; null where /proc is not there. */
export function processCpuMicros(pid: number): number | null {
  const precise = schedstatMicros(pid)
  if (precise !== null) return precise
  let stat: string
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
  } catch {
    return null
  }
  // The command name (field 2) may hold spaces; the fields after its closing parenthesis start at field 3.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  const userTicks = Number(fields[11])
  const systemTicks = Number(fields[12])
  return ((userTicks + systemTicks) * 1_000_000) / clockTicksPerSecond()
}

/** Runs `load` and returns its result with the server's CPU microseconds per request (null when unknown). */
export async function withCpuPerRequest<T extends { requests: number }>(pid: number, load: () => Promise<T>): Promise<T & { cpuMicrosPerRequest: number | null }> {
  const before = processCpuMicros(pid)
  const result = await load()
  const after = processCpuMicros(pid)
  const cpuMicrosPerRequest = before === null || after === null || result.requests === 0 ? null : (after - before) / result.requests
  return { ...result, cpuMicrosPerRequest }
}

/** How often untilIdle looks, and how many looks in a row must find the process waiting. */
const IDLE_LOOK_MS = 10
const IDLE_LOOKS = 3

/** The state of the process's main thread (R running or runnable, S sleeping, D in disk wait …); null without /proc. */
function mainThreadState(pid: number): string | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.charAt(stat.lastIndexOf(')') + 2)
  } catch {
    return null
  }
}

/**
 * Waits until the process is idle: its main thread found waiting (not running or runnable) IDLE_LOOKS times in a
 * row, IDLE_LOOK_MS apart, or `timeoutMs` passed. After a load tool stops, a server still works through the
 * requests that were in flight (49 queued reports of 1.5 ms are 75 ms of CPU, a second on a machine that gives it
 * a fourteenth of a core); a measurement that starts before that ends counts that work as its own. The thread's
 * state, not its CPU time, says it: a busy server that the machine hardly lets run gains almost no CPU time
 * between two looks, but stays runnable.
 */
export async function untilIdle(pid: number, timeoutMs = 5_000): Promise<void> {
  const deadline = performance.now() + timeoutMs
  let waiting = 0
  while (waiting < IDLE_LOOKS && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, IDLE_LOOK_MS))
    const state = mainThreadState(pid)
    if (state === null) return
    waiting = state === 'R' ? 0 : waiting + 1
  }
}
