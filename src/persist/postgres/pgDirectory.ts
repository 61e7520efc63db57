/*
 * The directory of global facts (ports.ts GlobalDirectory) of cluster mode:
 * the tenant rows, the e-mail and confirmation indexes and the uploaded
 * files' bytes, on PostgreSQL.
 *
 *   reads    of the rows and the indexes answer at once from this node's
 *            mirror (directoryMirror.ts), which the other nodes'
 *            notifications keep current: `listen` listens first and loads
 *            the mirror after, so a change committed meanwhile is in the
 *            load or arrives after it; a listener that reconnected (it may
 *            have missed some) loads it again, retrying every
 *            MIRROR_RELOAD_RETRY_MS. `freshen` reads the rows under one key
 *            into the mirror (a miss), this node's writes not yet committed
 *            kept. File bytes are read on demand, never mirrored.
 *   writes   go through the group commit (groupCommit.ts), fenced by the
 *            epoch the row's tenant is held at (pgStorage.ts hold): a tenant
 *            not held writes nothing, and the write resolves false.
 *
 * The layout marker's key of the e-mail index answers the current layout
 * (GLOBAL_INDEX_LAYOUT, ports.ts): PostgreSQL's tables never had another.
 */
import { GLOBAL_INDEX_LAYOUT, GLOBAL_INDEX_LAYOUT_KEY, type DirectoryTable, type FileTable, type GlobalIndexKey, type TenantInfo } from '../ports.js'
import { retryingLostConnection, type Sql } from './connection.js'
import { CHANNEL, tenantInfoOf, type DirectoryMirror, type MirrorChange, type MirroredTable } from './directoryMirror.js'
import { tenantOfWrite, type DirectoryWrite, type GroupCommit } from './groupCommit.js'
import type { MirrorTable } from './mirrorTable.js'

/** Between two attempts to reload the directory mirror after the listener reconnected. */
const MIRROR_RELOAD_RETRY_MS = 1_000

export class PgDirectory {
  readonly tenants: DirectoryTable<string, TenantInfo>
  readonly emails: DirectoryTable<GlobalIndexKey, string>
  readonly confirmations: DirectoryTable<GlobalIndexKey, string>
  readonly files: FileTable
  private unlisten: (() => Promise<void>) | null = null
  private closed = false

  constructor(
    private readonly sql: Sql,
    private readonly mirror: DirectoryMirror,
    private readonly group: GroupCommit,
    /** The epoch a tenant is held at; undefined when it is not held (pgStorage.ts heldEpoch). */
    private readonly epochOf: (tenant: string) => number | undefined,
  ) {
    this.tenants = this.tenantTable(this.mirror.tenants)
    this.emails = this.indexTable('emails', this.mirror.emails, GLOBAL_INDEX_LAYOUT)
    this.confirmations = this.indexTable('confirmations', this.mirror.confirmations, undefined)
    this.files = {
      get: (key) => this.fileBytes(key),
      put: (key, value) => this.directoryWrite({ table: 'files', key, value }),
      remove: (key) => this.directoryWrite({ table: 'files', key, value: undefined }),
    }
  }

  /** Listens for the other nodes' changes and loads the mirror; a listener that reconnects loads the mirror again. */
  async listen(): Promise<void> {
    let listening = false
    const listener = await this.sql.listen(
      CHANNEL,
      (payload) =>
        this.mirror.applyPayload(payload, (tenant) => {
          this.refreshTenant(tenant).catch((error: unknown) => console.error(`cluster: tenant '${tenant}': its directory row could not be read:`, error instanceof Error ? error.message : error))
        }),
      () => {
        if (listening) this.reloadMirror()
      },
    )
    listening = true
    this.unlisten = listener.unlisten
    await this.mirror.load(this.sql)
  }

  /** Loads the mirror again (its listener reconnected: notifications may have been missed), retrying until it did. */
  private reloadMirror(): void {
    if (this.closed) return
    this.mirror.load(this.sql).then(
      () => {
        for (const change of this.group.pendingMirrorChanges()) this.mirror.apply(change)
      },
      (error: unknown) => {
        console.error(`cluster: the directory mirror could not be reloaded (retrying in ${MIRROR_RELOAD_RETRY_MS} ms):`, error instanceof Error ? error.message : error)
        setTimeout(() => this.reloadMirror(), MIRROR_RELOAD_RETRY_MS).unref()
      },
    )
  }

  /** The storage is closing: a reconnected listener no longer reloads the mirror. */
  stopReloading(): void {
    this.closed = true
  }

  async stopListening(): Promise<void> {
    await this.unlisten?.().catch(() => undefined)
  }

  /** Queues a directory write into the group commit, fenced by its tenant's lease; false when it did not go in. */
  private directoryWrite(write: DirectoryWrite): Promise<boolean> {
    const epoch = this.epochOf(tenantOfWrite(write))
    if (epoch === undefined) return Promise.resolve(false)
    return this.group.write(write, epoch)
  }

  private tenantTable(rows: MirrorTable<string, TenantInfo>): DirectoryTable<string, TenantInfo> {
    return {
      get: (key) => rows.get(key),
      put: (key, value) => this.directoryWrite({ table: 'tenants', key, value }),
      remove: (key) => this.directoryWrite({ table: 'tenants', key, value: undefined }),
      getKeys: (range) => rows.keys(range),
    }
  }

  /** An index table ([name, tenant] → ''); `layout`: what the layout marker's key answers. */
  private indexTable(table: 'emails' | 'confirmations', rows: MirrorTable<[string, string], string>, layout: string | undefined): DirectoryTable<GlobalIndexKey, string> {
    const write = (key: GlobalIndexKey, value: string | undefined): Promise<boolean> => {
      if (!Array.isArray(key)) return Promise.resolve(false)
      return this.directoryWrite({ table, key, value } as MirrorChange)
    }
    return {
      get: (key) => (Array.isArray(key) ? rows.get(key) : key === GLOBAL_INDEX_LAYOUT_KEY ? layout : undefined),
      put: (key, value) => write(key, value),
      remove: (key) => write(key, undefined),
      getKeys: (range) => rows.keys(range as { start?: [string, string]; end?: [string, string] }),
    }
  }

  private async fileBytes(key: [string, string]): Promise<Buffer | undefined> {
    const [row] = await retryingLostConnection(() => this.sql<{ bytes: Buffer }[]>`SELECT bytes FROM files WHERE tenant = ${key[0]} AND file_key = ${key[1]}`)
    return row?.bytes
  }

  /** GlobalDirectory.freshen: the rows under `key` read into the mirror, this node's writes not yet committed kept. */
  async freshen(table: MirroredTable, key: string): Promise<void> {
    if (table === 'tenants') await retryingLostConnection(() => this.refreshTenant(key))
    else {
      const rows = await retryingLostConnection(() =>
        table === 'emails' ? this.sql<{ tenant: string }[]>`SELECT tenant FROM emails WHERE email = ${key}` : this.sql<{ tenant: string }[]>`SELECT tenant FROM confirmations WHERE hash = ${key}`,
      )
      this.mirror.replaceUnder(
        table,
        key,
        rows.map((row) => row.tenant),
      )
    }
    for (const change of this.group.pendingMirrorChanges()) {
      if (change.table === table && (typeof change.key === 'string' ? change.key : change.key[0]) === key) this.mirror.apply(change)
    }
  }

  /** Reads the tenant's directory row from the database and brings the mirror up to it (a miss of the mirror). */
  async refreshTenant(name: string): Promise<TenantInfo | undefined> {
    const [row] = await this.sql<{ name: string; created_at: number; unconfirmed: boolean; damaged: string | null; webhooks: boolean }[]>`
      SELECT name, created_at, unconfirmed, damaged, webhooks FROM tenants WHERE name = ${name}`
    const info = row === undefined ? undefined : tenantInfoOf(row)
    this.mirror.apply({ table: 'tenants', key: name, value: info })
    return info
  }
}
