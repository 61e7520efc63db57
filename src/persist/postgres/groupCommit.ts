/*
 * Group commit with fencing (ARCHITECTURE.md §8): every log append and every
 * directory write a node issues in one event-loop turn goes into ONE
 * PostgreSQL transaction, and an append resolves only once its COMMIT
 * returned (synchronous_commit on: flushed, and on a synchronous standby).
 *
 * A group of appends only is one round trip: BEGIN, the fenced INSERT and
 * COMMIT written together on a reserved connection (appendsInOneRoundTrip).
 * A group with directory writes is a transaction of its own round trips
 * (their statements depend on which tenants the fenced INSERT found live).
 *
 * Only one group transaction is in flight at a time; the next group
 * gathers meanwhile and starts as soon as it ends. So a tenant's entries
 * reach the log in order, and when a group fails (connection lost, the
 * primary gone) the tenants whose appends it held are `broken`: their
 * appends gathered since are rejected rather than sent, so the log never
 * holds an entry after a missing one. The tenant's reload (truncateAfter)
 * or a new hold repairs it. A group whose BEGIN found its connection lost
 * (the database restarted or failed over) is begun again on another one:
 * nothing of it was sent.
 *
 * Fencing. Each write carries the lease epoch its tenant is held at
 * (PgStorage.hold). The log insert is one statement for the whole group,
 * joined to the lease rows whose epoch matches and locking them FOR SHARE:
 *
 *   INSERT INTO log SELECT … FROM unnest(tenants, seqs, ats, entries, epochs)
 *   JOIN leases ON tenant AND epoch FOR SHARE OF leases RETURNING tenant
 *
 * A tenant taken over by another node (its epoch moved) inserts nothing;
 * the others go in. While the transaction runs it holds those lease rows,
 * so a takeover's UPDATE waits for its COMMIT and the new owner, reading
 * the log after its claim, sees every entry acknowledged here. The tenants
 * with directory writes but no append lock their lease rows the same way
 * (SELECT … FOR SHARE) in the same round trip. The directory writes of the
 * live tenants then run in the order they were issued, with pg_notify of
 * the mirrored ones (directoryMirror.ts), and the transaction commits.
 * Appends of a fenced tenant reject with FencedError; its directory
 * writes resolve false (callers issue them with `void`: a rejection would
 * end the process) and their mirror change is undone.
 */
import { GroupCommitStats } from '../groupCommitStats.js'
import type { TenantInfo } from '../ports.js'
import { isLostConnection, type ReservedSql, type Sql, type TxSql } from './connection.js'
import { CHANNEL, type DirectoryMirror, type MirrorChange } from './directoryMirror.js'
import { FencedError } from './fencedError.js'

/** Attempts of a group's BEGIN on connections found lost (a pool's worth after a database restart). */
const BEGIN_ATTEMPTS = 7

/** A directory write: a mirrored table's change, or an uploaded file's bytes (undefined: removed). */
export type DirectoryWrite = MirrorChange | { table: 'files'; key: [string, string]; value: Buffer | undefined }

/** The tenant whose lease a directory write is fenced by. */
export function tenantOfWrite(write: DirectoryWrite): string {
  if (write.table === 'tenants') return write.key
  return write.table === 'files' ? write.key[0] : write.key[1]
}

export interface QueuedAppend {
  readonly tenant: string
  readonly seq: number
  readonly epoch: number
  readonly at: number
  readonly bytes: Buffer
  resolve(bytes: number): void
  reject(error: unknown): void
}

interface QueuedWrite {
  readonly write: DirectoryWrite
  readonly epoch: number
  /** The mirror change that undoes this write's (none for files). */
  readonly undo: MirrorChange | null
  resolve(done: boolean): void
}

class Group {
  readonly appends: QueuedAppend[] = []
  readonly writes: QueuedWrite[] = []
  settle!: () => void
  /** Resolves (never rejects) once the group's transaction ended. */
  readonly settled = new Promise<void>((resolve) => {
    this.settle = resolve
  })
}

/** What the storage hears of each group's outcome. */
export interface GroupHooks {
  /** The appends that went in, in order. */
  committed(appends: readonly QueuedAppend[]): void
  /** The tenant was fenced at `epoch`. */
  fenced(tenant: string, epoch: number): void
}

export class GroupCommit {
  readonly stats = new GroupCommitStats()
  private gathering: Group | null = null
  private inFlight: Group | null = null
  private readonly broken = new Set<string>()

  constructor(
    private readonly sql: Sql,
    private readonly mirror: DirectoryMirror,
    private readonly hooks: GroupHooks,
  ) {}

  append(tenant: string, seq: number, epoch: number, at: number, bytes: Buffer): Promise<number> {
    const group = this.group()
    this.stats.noteAppend(group.settled, group.settled)
    return new Promise<number>((resolve, reject) => group.appends.push({ tenant, seq, epoch, at, bytes, resolve, reject }))
  }

  /** Queues a directory write; a mirrored one changes the mirror now (undone if the write does not go in). */
  write(write: DirectoryWrite, epoch: number): Promise<boolean> {
    const group = this.group()
    const undo = write.table === 'files' ? null : this.mirror.apply(write)
    return new Promise<boolean>((resolve) => group.writes.push({ write, epoch, undo, resolve }))
  }

  /** Resolves once every group gathered so far has ended. */
  async flushed(): Promise<void> {
    const waits = [this.inFlight?.settled, this.gathering?.settled]
    for (const wait of waits) if (wait !== undefined) await wait
  }

  /** The tenant's log is whole again (reloaded, or held anew): its appends are sent again. */
  repair(tenant: string): void {
    this.broken.delete(tenant)
  }

  /** The mirror changes of the groups not yet committed, to be applied again over a reloaded mirror. */
  pendingMirrorChanges(): MirrorChange[] {
    const changes: MirrorChange[] = []
    for (const group of [this.inFlight, this.gathering]) {
      for (const queued of group?.writes ?? []) if (queued.write.table !== 'files') changes.push(queued.write)
    }
    return changes
  }

  private group(): Group {
    if (this.gathering === null) {
      this.gathering = new Group()
      // The end of this event-loop turn: everything issued in it joins.
      if (this.inFlight === null) setImmediate(() => this.startNext())
    }
    return this.gathering
  }

  private startNext(): void {
    const group = this.gathering
    if (this.inFlight !== null || group === null) return
    this.gathering = null
    this.inFlight = group
    void this.run(group).finally(() => {
      this.inFlight = null
      group.settle()
      this.startNext()
    })
  }

  private async run(group: Group): Promise<void> {
    const appends: QueuedAppend[] = []
    for (const append of group.appends) {
      if (this.broken.has(append.tenant)) append.reject(new Error(`tenant '${append.tenant}': an earlier group commit failed; its appends wait for the tenant's reload`))
      else appends.push(append)
    }
    const writes = group.writes
    if (appends.length === 0 && writes.length === 0) return
    let live: Set<string>
    try {
      live = await this.transaction(appends, writes)
    } catch (error) {
      for (const append of appends) {
        this.broken.add(append.tenant)
        append.reject(error)
      }
      for (const queued of writes) this.undo(queued)
      return
    }
    const committed: QueuedAppend[] = []
    for (const append of appends) if (live.has(append.tenant)) committed.push(append)
    this.hooks.committed(committed)
    const fenced = new Map<string, number>()
    for (const append of appends) {
      if (live.has(append.tenant)) append.resolve(append.bytes.length)
      else {
        fenced.set(append.tenant, append.epoch)
        append.reject(new FencedError(append.tenant, append.epoch))
      }
    }
    for (const queued of writes) {
      const tenant = tenantOfWrite(queued.write)
      if (live.has(tenant)) queued.resolve(true)
      else {
        fenced.set(tenant, queued.epoch)
        this.undo(queued)
      }
    }
    for (const [tenant, epoch] of fenced) this.hooks.fenced(tenant, epoch)
  }

  /** The group's transaction; again on another connection when its BEGIN found the connection lost (connection.ts). */
  private async transaction(appends: readonly QueuedAppend[], writes: readonly QueuedWrite[]): Promise<Set<string>> {
    if (writes.length === 0) return this.appendsInOneRoundTrip(appends)
    for (let attempt = 1; ; attempt += 1) {
      let begun = false
      try {
        return await this.sql.begin(async (tx) => {
          begun = true
          const liveTenants = await lockAndInsert(tx, appends, writes)
          const notified: MirrorChange[] = []
          const statements: Promise<unknown>[] = []
          for (const queued of writes) {
            if (!liveTenants.has(tenantOfWrite(queued.write))) continue
            statements.push(writeStatement(tx, queued.write))
            if (queued.write.table !== 'files') notified.push(queued.write)
          }
          for (const payload of this.mirror.payloads(notified)) statements.push(tx`SELECT pg_notify(${CHANNEL}, ${payload})`)
          await Promise.all(statements)
          return liveTenants
        })
      } catch (error) {
        if (begun || attempt >= BEGIN_ATTEMPTS || !isLostConnection(error)) throw error
      }
    }
  }

  /**
   * A group of appends only (the common case): BEGIN, the fenced INSERT and COMMIT written together on a reserved
   * connection, one round trip. Should the INSERT fail, the COMMIT after it ends the aborted transaction as a
   * ROLLBACK. A connection found lost fails all three at once, without saying whether the COMMIT got there; the group
   * is then sent again on another connection: should the first one have committed, the log's (tenant, seq) key
   * refuses the second, the group fails and its tenants reload (their entries are in the log, unacknowledged).
   */
  private async appendsInOneRoundTrip(appends: readonly QueuedAppend[]): Promise<Set<string>> {
    for (let attempt = 1; ; attempt += 1) {
      const reserved = await this.sql.reserve()
      let inserted: { tenant: string }[]
      try {
        ;[, inserted] = await Promise.all([reserved`BEGIN`, fencedInsert(reserved, appends), reserved`COMMIT`])
      } catch (error) {
        if (!isLostConnection(error)) {
          reserved.release()
          throw error
        }
        // Not released: the client has put the lost connection among its closed ones, to connect it anew; a release
        // would hand it out again as open.
        if (attempt >= BEGIN_ATTEMPTS) throw error
        continue
      }
      reserved.release()
      return new Set(inserted.map((row) => row.tenant))
    }
  }

  private undo(queued: QueuedWrite): void {
    if (queued.undo !== null) this.mirror.apply(queued.undo)
    queued.resolve(false)
  }
}

/**
 * The fenced log insert for the group's appends and the lease lock of the tenants with directory writes only, in
 * one round trip; answers the tenants whose lease epoch matched (their rows locked until COMMIT).
 */
async function lockAndInsert(tx: TxSql, appends: readonly QueuedAppend[], writes: readonly QueuedWrite[]): Promise<Set<string>> {
  const live = new Set<string>()
  const appending = new Set<string>()
  for (const append of appends) appending.add(append.tenant)
  const lockTenants: string[] = []
  const lockEpochs: string[] = []
  const seen = new Set<string>()
  for (const queued of writes) {
    const tenant = tenantOfWrite(queued.write)
    if (appending.has(tenant) || seen.has(tenant)) continue
    seen.add(tenant)
    lockTenants.push(tenant)
    lockEpochs.push(String(queued.epoch))
  }
  const inserted = appends.length === 0 ? Promise.resolve([] as { tenant: string }[]) : fencedInsert(tx, appends)
  const locked =
    lockTenants.length === 0
      ? Promise.resolve([] as { tenant: string }[])
      : tx<{ tenant: string }[]>`
          SELECT l.tenant FROM leases l
          JOIN unnest(${tx.array(lockTenants)}::text[], ${tx.array(lockEpochs)}::int8[]) AS h (tenant, epoch) ON l.tenant = h.tenant AND l.epoch = h.epoch
          FOR SHARE OF l`
  // Both at once: the client sends a query when it is awaited, so Promise.all pipelines them.
  const [insertedRows, lockedRows] = await Promise.all([inserted, locked])
  for (const row of insertedRows) live.add(row.tenant)
  for (const row of lockedRows) live.add(row.tenant)
  return live
}

/** The appends whose tenant's lease is at their epoch go in, those lease rows locked FOR SHARE; answers their tenants. */
function fencedInsert(tx: TxSql | ReservedSql, appends: readonly QueuedAppend[]): Promise<{ tenant: string }[]> {
  return tx<{ tenant: string }[]>`
    INSERT INTO log (tenant, seq, at, entry)
    SELECT g.tenant, g.seq, g.at, decode(g.entry, 'hex')
    FROM unnest(${tx.array(appends.map((a) => a.tenant))}::text[], ${tx.array(appends.map((a) => String(a.seq)))}::int8[],
                ${tx.array(appends.map((a) => String(a.at)))}::int8[], ${tx.array(appends.map((a) => a.bytes.toString('hex')))}::text[],
                ${tx.array(appends.map((a) => String(a.epoch)))}::int8[]) AS g (tenant, seq, at, entry, epoch)
    JOIN leases l ON l.tenant = g.tenant AND l.epoch = g.epoch
    FOR SHARE OF l
    RETURNING tenant`
}

function writeStatement(tx: TxSql, write: DirectoryWrite): Promise<unknown> {
  switch (write.table) {
    case 'tenants':
      return write.value === undefined ? tx`DELETE FROM tenants WHERE name = ${write.key}` : putTenant(tx, write.key, write.value)
    case 'emails':
      return write.value === undefined
        ? tx`DELETE FROM emails WHERE email = ${write.key[0]} AND tenant = ${write.key[1]}`
        : tx`INSERT INTO emails (email, tenant) VALUES (${write.key[0]}, ${write.key[1]}) ON CONFLICT DO NOTHING`
    case 'confirmations':
      return write.value === undefined
        ? tx`DELETE FROM confirmations WHERE hash = ${write.key[0]} AND tenant = ${write.key[1]}`
        : tx`INSERT INTO confirmations (hash, tenant) VALUES (${write.key[0]}, ${write.key[1]}) ON CONFLICT DO NOTHING`
    case 'files':
      return write.value === undefined
        ? tx`DELETE FROM files WHERE tenant = ${write.key[0]} AND file_key = ${write.key[1]}`
        : tx`INSERT INTO files (tenant, file_key, bytes) VALUES (${write.key[0]}, ${write.key[1]}, ${write.value})
             ON CONFLICT (tenant, file_key) DO UPDATE SET bytes = EXCLUDED.bytes`
  }
}

function putTenant(tx: TxSql, name: string, info: TenantInfo): Promise<unknown> {
  return tx`
    INSERT INTO tenants (name, created_at, unconfirmed, damaged, webhooks) VALUES (${name}, ${String(info.createdAt)}, ${info.unconfirmed === true}, ${info.damaged ?? null}, ${info.webhooks === true})
    ON CONFLICT (name) DO UPDATE SET created_at = EXCLUDED.created_at, unconfirmed = EXCLUDED.unconfirmed, damaged = EXCLUDED.damaged, webhooks = EXCLUDED.webhooks`
}
