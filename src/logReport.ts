/*
 * What the operator CLI tells of a tenant's log entries, read from the store
 * (reads only, so it works while a server runs): `history <tenant>
 * --entries` lists each entry with its time, who made it and what it
 * changed, so a restore point can be chosen; `restore … --dry-run` says
 * what a restore to a point would undo: per resource, the objects created
 * since (the restore removes them), changed since (it puts their earlier
 * version back: an update, a move to or out of the trash) and removed
 * since (it brings them back). An object created and removed again since
 * the point is in neither state and is not counted. The changes are those
 * the change feed and the history tell (engine/changesOfEntry.ts).
 */
import { changesOfEntry } from './engine/changesOfEntry.js'
import type { LoggedEntry } from './engine/logEntry.js'
import type { TenantLog } from './persist/ports.js'

/** Who made an entry's write, as the listing says it. */
function byText(entry: LoggedEntry): string {
  if (entry.by === undefined) return 'user unknown'
  return entry.by === null ? 'no user' : `user ${entry.by}`
}

/** One line per log entry: seq, time, who, and each change (an update with the fields it changed). */
function entryLine(seq: number, entry: LoggedEntry): string {
  const changes = changesOfEntry(seq, entry).map((change) => {
    const fields = change.kind === 'updated' && change.was !== undefined ? ` (${change.was.names.join(', ')})` : ''
    return `${change.kind} ${change.decl.type} ${change.id}${fields}`
  })
  const what = changes.length === 0 ? 'no change the history tells (sessions, deliveries, internal records)' : changes.join('; ')
  return `${seq}  ${new Date(entry.at).toISOString()}  ${byText(entry)}  ${what}`
}

/** A bound of `--from`/`--to`: a sequence number, or an ISO 8601 time. */
export type EntryBound = { seq: number } | { atMs: number }

/** Reads a bound given on the command line; null for a text that is neither (the caller refuses it). */
export function parseEntryBound(text: string): EntryBound | null {
  if (/^[0-9]+$/.test(text)) return { seq: Number(text) }
  const atMs = /^\d{4}-\d{2}-\d{2}(T|$)/.test(text) ? Date.parse(text) : Number.NaN
  return Number.isNaN(atMs) ? null : { atMs }
}

function within(seq: number, entry: LoggedEntry, from: EntryBound | null, to: EntryBound | null): boolean {
  if (from !== null && ('seq' in from ? seq < from.seq : entry.at < from.atMs)) return false
  if (to !== null && ('seq' in to ? seq > to.seq : entry.at > to.atMs)) return false
  return true
}

/** The lines of the tenant's log entries within the bounds, oldest first. */
export function* entryLines(log: TenantLog, tenant: string, from: EntryBound | null, to: EntryBound | null): Generator<string> {
  for (const { seq, entry } of log.entriesAfter(tenant, 0)) if (within(seq, entry, from, to)) yield entryLine(seq, entry)
}

/** Per resource type: how many objects a restore would take back, by what happened to them since the point. */
export interface UndoCounts {
  created: number
  changed: number
  removed: number
}

/** What a restore to after entry `pointSeq` would undo (see the top): counts by resource type, and the entries after it. */
export function undoneSince(log: TenantLog, tenant: string, pointSeq: number): { entries: number; fromAt: number | null; toAt: number | null; byType: Map<string, UndoCounts> } {
  const objects = new Map<string, { type: string; createdSince: boolean; removedNow: boolean }>()
  let entries = 0
  let fromAt: number | null = null
  let toAt: number | null = null
  for (const { seq, entry } of log.entriesAfter(tenant, pointSeq)) {
    entries += 1
    fromAt ??= entry.at
    toAt = entry.at
    for (const change of changesOfEntry(seq, entry)) {
      const key = `${change.decl.type}\u0000${change.id}`
      const known = objects.get(key)
      if (known === undefined) objects.set(key, { type: change.decl.type, createdSince: change.kind === 'created', removedNow: change.kind === 'removed' })
      else known.removedNow = change.kind === 'removed'
    }
  }
  const byType = new Map<string, UndoCounts>()
  for (const object of objects.values()) {
    if (object.createdSince && object.removedNow) continue
    let counts = byType.get(object.type)
    if (counts === undefined) {
      counts = { created: 0, changed: 0, removed: 0 }
      byType.set(object.type, counts)
    }
    if (object.createdSince) counts.created += 1
    else if (object.removedNow) counts.removed += 1
    else counts.changed += 1
  }
  return { entries, fromAt, toAt, byType }
}

/** The dry run's text: what the restore would undo, per resource type. */
export function undoneText(tenant: string, pointSeq: number, undone: ReturnType<typeof undoneSince>): string {
  if (undone.entries === 0) return `restore of '${tenant}' to seq ${pointSeq} (dry run): nothing to undo, it is the current state`
  const times = `${new Date(undone.fromAt ?? 0).toISOString()} .. ${new Date(undone.toAt ?? 0).toISOString()}`
  const lines = [`restore of '${tenant}' to seq ${pointSeq} (dry run; nothing changed): would undo ${undone.entries} log entries after it (${times})`]
  const types = [...undone.byType.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  if (types.length === 0) lines.push('  no object the history tells changed (sessions, deliveries, internal records only)')
  for (const [type, counts] of types) lines.push(`  ${type}: ${counts.created} created since (would go), ${counts.changed} changed (would be as before), ${counts.removed} removed (would come back)`)
  return lines.join('\n')
}
