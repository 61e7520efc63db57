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

/** User + system CPU time of a process so far, in microseconds; null where /proc is not there. */
export function processCpuMicros(pid: number): number | null {
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
