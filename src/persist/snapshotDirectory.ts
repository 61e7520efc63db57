/*
 * The embedded SnapshotStore (ports.ts): one folder per tenant under
 * DATA_DIR/snapshots, one file per snapshot, named by its sequence number
 * (the file format and its atomic writing: snapshotFile.ts, its reading: snapshotReading.ts; its checks:
 * snapshotChecks.ts; the pruning rule: snapshotPruning.ts). A snapshot is named by its file's path. Corrupt files
 * met on the way are told to the store's SnapshotFaults.
 */
import fs from 'node:fs'
import type { Steps } from '../engine/steps.js'
import type { SnapshotBody, SnapshotHeader, SnapshotListing, SnapshotSource, SnapshotStore, UnplacedSnapshot } from './ports.js'
import type { SnapshotFaults } from './snapshotFaults.js'
import { rememberSnapshotCheck } from './snapshotChecks.js'
import { listSnapshots, tenantSnapshotDir, writeSnapshotInSlices, writeUnplacedSnapshot } from './snapshotFile.js'
import { snapshotFileSteps } from './snapshotReading.js'
import { readSnapshotHeader } from './snapshotHeader.js'
import { pruneSnapshots } from './snapshotPruning.js'

export class SnapshotDirectory implements SnapshotStore {
  constructor(
    readonly dataDir: string,
    readonly faults: SnapshotFaults,
  ) {}

  list(tenant: string): SnapshotListing[] {
    return listSnapshots(this.dataDir, tenant)
  }

  readSteps(file: string): Steps<{ header: SnapshotHeader; body: SnapshotBody }> {
    return snapshotFileSteps(file)
  }

  readHeader(file: string): SnapshotHeader {
    return readSnapshotHeader(file)
  }

  noteChecked(file: string, problem: string | null): void {
    rememberSnapshotCheck(file, problem)
  }

  write(tenant: string, seq: number, at: number, body: SnapshotSource, onProgress?: (recordsDone: number) => void): Promise<{ file: string; bytes: number }> {
    return writeSnapshotInSlices(tenantSnapshotDir(this.dataDir, tenant), tenant, seq, at, body, onProgress)
  }

  writeUnplaced(tenant: string, at: number, body: SnapshotSource, onProgress?: (recordsDone: number) => void): Promise<UnplacedSnapshot> {
    return writeUnplacedSnapshot(tenantSnapshotDir(this.dataDir, tenant), tenant, at, body, onProgress)
  }

  prune(tenant: string, kept: number, windowStartMs: number, startsLogLine: (seq: number) => boolean): Promise<number> {
    return pruneSnapshots(this.dataDir, tenant, kept, windowStartMs, startsLogLine, this.faults)
  }

  async removeOlderThan(tenant: string, seq: number): Promise<void> {
    for (const older of this.list(tenant)) if (older.seq < seq) await fs.promises.rm(older.file, { force: true })
  }
}
