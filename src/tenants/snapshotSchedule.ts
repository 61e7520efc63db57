/*
 * When a tenant snapshots itself, and the snapshot it runs. Every durable
 * entry is counted (noteLogged); once SNAPSHOT_EVERY_COMMANDS entries or
 * SNAPSHOT_EVERY_LOG_BYTES bytes were logged since the last snapshot, one
 * is started on the next event-loop turn (unless the tenant has gone to rest
 * meanwhile). A snapshot takes the state's records at one moment (the
 * collections frozen: recovery.ts snapshotSourceOf), waits until the log under them is durable,
 * writes them to the snapshot store a slice per turn, and then prunes the
 * snapshots and log entries no restore within LOG_RETENTION_MS needs. One
 * runs at a time: asking while one runs answers that one.
 */
import type { Config } from '../config.js'
import type { TenantState } from '../engine/tenantState.js'
import type { Storage } from '../persist/ports.js'
import { snapshotSourceOf } from './recovery.js'

export interface SnapshotResult {
  seq: number
  file: string
  bytes: number
  durationMs: number
}

export interface SnapshotSubject {
  readonly tenant: string
  readonly state: TenantState
  readonly resting: boolean
  durable(seq: number): Promise<void>
}

export class SnapshotSchedule {
  /** Entries logged since the last snapshot began. */
  entriesSinceSnapshot = 0
  private logBytesSinceSnapshot = 0
  private running: Promise<SnapshotResult> | null = null
  /** When the last snapshot was taken; null when none was since start. */
  lastSnapshotAt: number | null = null

  constructor(
    private readonly subject: SnapshotSubject,
    private readonly config: Config,
    private readonly store: Storage,
  ) {}

  /**
   * Whether a snapshot holds the state as it is: none is running, and nothing was logged since the last one began
   * (or since the state was loaded from one, or restored as one).
   */
  get upToDate(): boolean {
    return this.running === null && this.entriesSinceSnapshot === 0
  }

  /** The state was loaded from disk with `replayedEntries` entries after its snapshot (or replaced, with 0). */
  restart(replayedEntries: number): void {
    this.entriesSinceSnapshot = replayedEntries
    this.logBytesSinceSnapshot = 0
  }

  /** An entry of `bytes` is durable; starts a snapshot on the next turn when one is due. */
  noteLogged(bytes: number): void {
    this.entriesSinceSnapshot += 1
    this.logBytesSinceSnapshot += bytes
    const due = this.entriesSinceSnapshot >= this.config.snapshotEveryCommands || this.logBytesSinceSnapshot >= this.config.snapshotEveryLogBytes
    if (due && this.running === null) {
      setImmediate(() => {
        if (this.subject.resting) return
        this.snapshot().catch((error: unknown) => console.error(`snapshot of tenant '${this.subject.tenant}' failed:`, error))
      })
    }
  }

  /** See the top; `onProgress` hears the records written so far. */
  snapshot(onProgress?: (recordsDone: number) => void): Promise<SnapshotResult> {
    if (this.running !== null) return this.running
    const { tenant, state } = this.subject
    const started = performance.now()
    const seq = state.seq
    const at = Date.now()
    const { source, release } = snapshotSourceOf(state)
    const entriesTaken = this.entriesSinceSnapshot
    this.restart(0)
    this.running = (async () => {
      let written: { file: string; bytes: number }
      try {
        await this.subject.durable(seq)
        written = await this.store.snapshots.write(tenant, seq, at, source, onProgress)
      } catch (error) {
        // No snapshot holds those entries: the next one is due as before (and a clean stop writes it).
        this.entriesSinceSnapshot += entriesTaken
        throw error
      } finally {
        release()
      }
      const { file, bytes } = written
      const windowStartMs = at - this.config.logRetentionMs
      const startsLogLine = (snapshotSeq: number) => !this.store.hasEntry(tenant, snapshotSeq)
      const logNotNeededUpto = await this.store.snapshots.prune(tenant, this.config.snapshotsKept, windowStartMs, startsLogLine)
      await this.store.prune(tenant, logNotNeededUpto, windowStartMs)
      this.lastSnapshotAt = at
      return { seq, file, bytes, durationMs: performance.now() - started }
    })().finally(() => {
      this.running = null
    })
    return this.running
  }
}
