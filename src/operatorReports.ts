/*
 * What the operator CLI prints about restores and history: plain text for a
 * terminal or a log, the same whether the work ran in the CLI (offline) or
 * in the running server (online, from the admin listener's JSON answer).
 */
import { describeRange, type TenantHistory } from './persist/history.js'

export interface RestoreOutcome {
  seq: number
  previousLastSeq: number
  objects: number
  file: string
  restored: string
  pointSeq: number | null
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
