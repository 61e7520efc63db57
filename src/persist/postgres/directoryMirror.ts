/*
 * The directory mirror: the tenants, emails and confirmations tables held
 * in memory (mirrorTable.ts), so that the synchronous reads of the
 * GlobalDirectory port answer at once on every node.
 *
 * Loaded whole at open. A node's own puts and removes change its mirror at
 * once, when they are issued (as the embedded tables answer a get after a
 * put), and are undone if their group commit does not take them (fenced,
 * or failed). The group transaction that commits them also sends what
 * changed to every node with pg_notify on CHANNEL (a JSON payload naming
 * the sending node, in pieces under PostgreSQL's 8000-byte limit; a tenant
 * row too large for one is sent as its name, and read by the receivers);
 * each node applies the changes of the others. A notification is delivered only
 * after its transaction commits, and in commit order, so every mirror ends
 * at the database's state. Notifications are lost while the listening
 * connection is down, so a node whose listener (re)connects loads the
 * mirror again.
 */
import type { TenantInfo } from '../ports.js'
import type { Sql } from './connection.js'
import { MirrorTable } from './mirrorTable.js'

export const CHANNEL = 'timeledger_directory'
/** Below PostgreSQL's 8000-byte limit of a notification's payload. */
const PAYLOAD_MAX_BYTES = 7_000

/** Sent instead of a tenant row too large for a notification: the receivers read the row themselves. */
const REREAD = 'reread'

export type MirroredTable = 'tenants' | 'emails' | 'confirmations'

/** One change of a mirrored table: a put (value) or a remove (value undefined). */
export type MirrorChange = { table: 'tenants'; key: string; value: TenantInfo | undefined } | { table: 'emails' | 'confirmations'; key: [string, string]; value: string | undefined }

interface Payload {
  node: string
  changes: [MirroredTable, string | [string, string], TenantInfo | string | null][]
}

interface TenantRow {
  name: string
  created_at: number
  unconfirmed: boolean
  damaged: string | null
  webhooks: boolean
}

/** The TenantInfo of a row, with only the members set (as the embedded table keeps what was put). */
export function tenantInfoOf(row: TenantRow): TenantInfo {
  const info: TenantInfo = { createdAt: row.created_at }
  if (row.unconfirmed) info.unconfirmed = true
  if (row.damaged !== null) info.damaged = row.damaged
  if (row.webhooks) info.webhooks = true
  return info
}

export class DirectoryMirror {
  readonly tenants = new MirrorTable<string, TenantInfo>()
  readonly emails = new MirrorTable<[string, string], string>()
  readonly confirmations = new MirrorTable<[string, string], string>()

  constructor(private readonly nodeId: string) {}

  /** Replaces the mirror with the tables' rows now. */
  async load(sql: Sql): Promise<void> {
    const [tenants, emails, confirmations] = await Promise.all([
      sql<TenantRow[]>`SELECT name, created_at, unconfirmed, damaged, webhooks FROM tenants`,
      sql<{ email: string; tenant: string }[]>`SELECT email, tenant FROM emails`,
      sql<{ hash: string; tenant: string }[]>`SELECT hash, tenant FROM confirmations`,
    ])
    this.tenants.clear()
    this.emails.clear()
    this.confirmations.clear()
    for (const row of tenants) this.tenants.set(row.name, tenantInfoOf(row))
    for (const row of emails) this.emails.set([row.email, row.tenant], '')
    for (const row of confirmations) this.confirmations.set([row.hash, row.tenant], '')
  }

  /** Replaces the entries under `first` (an e-mail, a confirmation's hash) by those of `tenants`. */
  replaceUnder(table: 'emails' | 'confirmations', first: string, tenants: readonly string[]): void {
    const entries = this[table]
    const held = [...entries.keys({ start: [first, ''], end: [first, '\uffff'] })].filter((key) => key[0] === first)
    for (const key of held) entries.delete(key)
    for (const tenant of tenants) entries.set([first, tenant], '')
  }

  /** Applies one change; answers the change that undoes it. */
  apply(change: MirrorChange): MirrorChange {
    if (change.table === 'tenants') {
      const before: MirrorChange = { table: 'tenants', key: change.key, value: this.tenants.get(change.key) }
      if (change.value === undefined) this.tenants.delete(change.key)
      else this.tenants.set(change.key, change.value)
      return before
    }
    const table = this[change.table]
    const before: MirrorChange = { table: change.table, key: change.key, value: table.get(change.key) }
    if (change.value === undefined) table.delete(change.key)
    else table.set(change.key, change.value)
    return before
  }

  /** The notification payloads that tell the other nodes of `changes` (committed by this node). */
  payloads(changes: readonly MirrorChange[]): string[] {
    const payloads: string[] = []
    let piece: Payload['changes'] = []
    let pieceBytes = 0
    for (const change of changes) {
      let wire: Payload['changes'][number] = [change.table, change.key, change.value ?? null]
      let bytes = Buffer.byteLength(JSON.stringify(wire))
      // A row too large to travel (a long `damaged` text) is sent as its key only: the receivers read it.
      if (bytes > PAYLOAD_MAX_BYTES && change.table === 'tenants') {
        wire = [change.table, change.key, REREAD]
        bytes = Buffer.byteLength(JSON.stringify(wire))
      }
      if (pieceBytes + bytes > PAYLOAD_MAX_BYTES && piece.length > 0) {
        payloads.push(JSON.stringify({ node: this.nodeId, changes: piece }))
        piece = []
        pieceBytes = 0
      }
      piece.push(wire)
      pieceBytes += bytes
    }
    if (piece.length > 0) payloads.push(JSON.stringify({ node: this.nodeId, changes: piece }))
    return payloads
  }

  /**
   * Applies a notification from another node (this node's own were applied when issued); `reread` reads a tenant
   * row that was too large to travel.
   */
  applyPayload(text: string, reread: (tenant: string) => void): void {
    const payload = JSON.parse(text) as Payload
    if (payload.node === this.nodeId) return
    for (const [table, key, value] of payload.changes) {
      if (table === 'tenants' && value === REREAD) reread(key as string)
      else if (table === 'tenants') this.apply({ table, key: key as string, value: (value as TenantInfo | null) ?? undefined })
      else this.apply({ table, key: key as [string, string], value: (value as string | null) ?? undefined })
    }
  }
}
