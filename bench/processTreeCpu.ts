/*
 * CPU time of a process together with its children, for servers that work
 * in several processes: PostgreSQL (the postmaster forks one backend per
 * connection, plus the WAL writer, checkpointer and so on) and HAProxy.
 *
 * /proc lists every process with its parent (field 4 of /proc/<pid>/stat);
 * the tree under the root is walked at each reading and each member's
 * user + system time is summed (processCpu.ts reads one process). Children
 * that exited and were reaped meanwhile are counted through the root's
 * cutime + cstime (fields 16 and 17), so a backend that ended during a load
 * is not lost. Read before and after a load, the difference is the tree's
 * CPU for that load. At most MAX_PROCESSES entries of /proc are read.
 */
import fs from 'node:fs'
import { clockTicksPerSecond, processCpuMicros } from './processCpu.js'

const MAX_PROCESSES = 100_000

/** The parent pid of every process /proc lists. */
function parents(): Map<number, number> {
  const parentOf = new Map<number, number>()
  for (const name of fs.readdirSync('/proc').slice(0, MAX_PROCESSES)) {
    if (!/^\d+$/.test(name)) continue
    let stat: string
    try {
      stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8')
    } catch {
      continue // ended meanwhile
    }
    parentOf.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]))
  }
  return parentOf
}

/** Microseconds of CPU the reaped children of `pid` used (cutime + cstime), or 0. */
function reapedChildrenMicros(pid: number, ticksPerSecond: number): number {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    const rest = fields.slice(fields.lastIndexOf(')') + 2).split(' ')
    return ((Number(rest[13]) + Number(rest[14])) * 1_000_000) / ticksPerSecond
  } catch {
    return 0
  }
}

/** User + system CPU of `rootPid` and every live descendant, plus reaped children's, in microseconds; null without /proc. */
export function processTreeCpuMicros(rootPid: number): number | null {
  if (processCpuMicros(rootPid) === null) return null
  const parentOf = parents()
  const members = new Set([rootPid])
  let grew = true
  while (grew) {
    grew = false
    for (const [pid, parent] of parentOf) {
      if (!members.has(pid) && members.has(parent)) {
        members.add(pid)
        grew = true
      }
    }
  }
  let total = reapedChildrenMicros(rootPid, clockTicksPerSecond())
  for (const pid of members) total += processCpuMicros(pid) ?? 0
  return total
}
