/*
 * What the operator CLI prints about restores, history and a running
 * server's status: plain text for a terminal or a log, the same whether the
 * work ran in the CLI (offline) or in the running server (online, from the
 * admin listener's JSON answer).
 */
import type { ServerStatus } from './admin/statusRoute.js'
import { describeRange, type TenantHistory } from './persist/history.js'

export interface RestoreOutcome {
  seq: number
  previousLastSeq: number
  objects: number
  file: string
  restored: string
  pointSeq: number | null
  /** Online: how long the swap held the tenant (onlineRestore.ts). */
  swapMs?: number
}

export function restoreOutcomeText(tenant: string, outcome: RestoreOutcome): string {
  const { seq, previousLastSeq, pointSeq } = outcome
  const lines = [`${tenant}: restored ${outcome.objects} objects from ${outcome.restored}; it is now snapshot seq ${seq} → ${outcome.file}`]
  if (pointSeq !== null && pointSeq < previousLastSeq) {
    lines.push(
      `  entries ${pointSeq + 1}..${previousLastSeq}, written after the restored point, are no longer part of the current state;` +
        ` they stay in the history ('history ${tenant}') and can be restored with --to-seq until LOG_RETENTION_MS prunes them`,
    )
  } else if (previousLastSeq > 0) {
    lines.push(`  the state before (seq ${previousLastSeq}) stays in the history ('history ${tenant}') until LOG_RETENTION_MS prunes it`)
  }
  lines.push(`  the next write gets seq ${seq + 1}`)
  if (outcome.swapMs !== undefined) lines.push(`  the tenant's requests waited ${outcome.swapMs} ms for the swap`)
  return lines.join('\n')
}

export function historyText(history: TenantHistory): string {
  const lines = [`tenant ${history.tenant}`, '', 'snapshots (newest first):']
  if (history.snapshots.length === 0) lines.push('  none')
  for (const snapshot of history.snapshots) {
    const taken = snapshot.at === null ? '?' : new Date(snapshot.at).toISOString()
    lines.push(`  seq ${String(snapshot.seq).padEnd(10)} ${taken.padEnd(24)}  ${String(snapshot.bytes).padStart(12)} bytes${snapshot.problem === null ? '' : `  UNUSABLE: ${snapshot.problem}`}`)
  }
  lines.push('', 'log ranges:')
  if (history.logRanges.length === 0) lines.push('  none')
  for (const range of history.logRanges) lines.push(`  ${describeRange(range)}, ${range.toSeq - range.fromSeq + 1} entries`)
  lines.push('', 'reachable restore points (restore --to-seq / --to-time):')
  if (history.reachable.length === 0) lines.push('  none')
  for (const range of history.reachable) lines.push(`  ${describeRange(range)}`)
  return lines.join('\n')
}

const KIB = 1024
const MIB = 1024 * KIB
const GIB = 1024 * MIB

function mebibytes(bytes: number): string {
  if (bytes >= GIB) return `${(bytes / GIB).toFixed(1)} GiB`
  return bytes >= MIB ? `${(bytes / MIB).toFixed(1)} MiB` : `${(bytes / KIB).toFixed(0)} KiB`
}

function uptime(seconds: number): string {
  const days = Math.floor(seconds / 86_400)
  const hours = Math.floor((seconds % 86_400) / 3600)
  const minutes = Math.floor((seconds % 3600) / 60)
  const parts = days > 0 ? [`${days}d`, `${hours}h`, `${minutes}m`] : hours > 0 ? [`${hours}h`, `${minutes}m`] : [`${minutes}m`, `${seconds % 60}s`]
  return parts.join(' ')
}

/** `timeledger status`: the server's /status answer (statusRoute.ts), asked at `adminAddress`. */
export function statusText(status: ServerStatus, adminAddress: string): string {
  const { ports, tenants, memory, log } = status
  const publicAddress = ports.public === null ? 'not listening yet' : `http://${status.host}:${ports.public}  (tenants at http://<tenant>.${status.baseDomain}:${ports.public}/v1)`
  const store = log.storeBytes === null ? 'in PostgreSQL' : `store ${mebibytes(log.storeBytes)} in use${log.storeLimitBytes ? ` of ${mebibytes(log.storeLimitBytes)} (LMDB_MAP_SIZE_BYTES)` : ''}`
  const rows: [string, string][] = [
    ['pid', String(status.pid)],
    ...(status.node === null ? [] : [['node', status.node] as [string, string]]),
    ['data', status.dataDir],
    ['public', publicAddress],
    ['admin', adminAddress],
    ...(ports.internal === null ? [] : [['internal', `port ${ports.internal}`] as [string, string]]),
    ['started', `${new Date(status.startedAt).toISOString()}  (up ${uptime(status.uptimeS)})`],
    ['tenants', `${tenants.inMemory} in memory of ${tenants.known}${tenants.closed > 0 ? `, ${tenants.closed} closed (damaged: see the server's log)` : ''}`],
    ['memory', `resident ${mebibytes(memory.residentBytes)}; heap ${mebibytes(memory.heapUsedBytes)} used of ${mebibytes(memory.heapTotalBytes)}`],
    ['log', `${log.entries} entries; ${store}`],
  ]
  return [`running: ${status.phase}`, ...rows.map(([name, value]) => `  ${name.padEnd(9)} ${value}`)].join('\n')
}
