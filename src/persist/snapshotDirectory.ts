/*
 * The embedded SnapshotStore (ports.ts): one folder per tenant under
 * DATA_DIR/snapshots, one file per snapshot, named by its sequence number
 * (the file format, its atomic writing, its checks and the pruning rule:
 * snapshotFile.ts). A snapshot is named by its file's path. Corrupt files
 * met on the way are told to the store's SnapshotFaults.
 */
import fs from 'node:fs'
import type { Steps } from '../engine/steps.js'
import type { SnapshotBody, SnapshotHeader, SnapshotListing, SnapshotSource, SnapshotStore } from './ports.js'
import type { SnapshotFaults } from './snapshotFaults.js'
import {
  listSnapshots,
  pruneSnapshots,
  readSnapshotHeader,
  rememberSnapshotCheck,
  snapshotFileSteps,
  tenantSnapshotDir,
  writeSnapshotInSlices,
} from './snapshotFile.js'

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

  prune(tenant: string, kept: number, windowStartMs: number, startsLogLine: (seq: number) => boolean): Promise<number> {
    return pruneSnapshots(this.dataDir, tenant, kept, windowStartMs, startsLogLine, this.faults)
  }

  async removeOlderThan(tenant: string, seq: number): Promise<void> {
    for (const older of this.list(tenant)) if (older.seq < seq) await fs.promises.rm(older.file, { force: true })
  }
}
