/*
 * Engine figures, measured in-process on a throwaway copy of a fixture (run
 * as its own child with --expose-gc, so the heap can be measured after a
 * full collection and the runner's own memory stays out of it):
 *
 *   recovery    activating the tenant: newest snapshot, decoded and loaded
 *               into collections, indexes and live aggregates (no log after it)
 *   heap        memory used by the loaded tenant, per time record: V8's heap
 *               plus the bytes of its ArrayBuffers (typed arrays: the
 *               columns of the record store, which V8 keeps outside its
 *               heap), each also given apart; and how much the decoded
 *               records of the snapshot body alone take
 *   snapshot    actor.snapshot(): the synchronous part (collecting the
 *               records, which blocks the event loop) and the whole (encode,
 *               hash and write a slice at a time, fsync, rename, log prune),
 *               the file size, and the most resident memory it took above
 *               the loaded tenant's (sampled every RSS_SAMPLE_MS)
 *   writes      REPLAY_ENTRIES single-record writes through actor.write,
 *               issued BURST per event-loop turn (group commit), durable
 *   written     in a new process as after a restart, recovery from the
 *               snapshot just written (this build's snapshot format, where
 *               `recovery` reads the fixture's, whichever build made it),
 *               up to its sequence number (no log entry after it)
 *   replay      recovery again, in that process (this
 *               one has built time records already, which changes how V8
 *               shapes the decoded ones; recordMaking.ts inRecordShape): the
 *               snapshot, then those REPLAY_ENTRIES log entries; the rate is
 *               counted from the first progress report (10,000 entries in) to
 *               the end, so the snapshot load is excluded
 *   activation  the same recovery once more in that process, run a slice per
 *               event-loop turn as a server activates a tenant: the total
 *               time, and the longest the event loop was held (a 1 ms timer
 *               notes every turn)
 *
 *   node --expose-gc dist/bench/engineFigures.js --records 1000000 [--replay 200000]
 * prints one line `ENGINE_FIGURES <json>` at the end. The replay runs as
 *   node dist/bench/engineFigures.js --replay-of <data dir> --tenant <name>
 * which prints one line `REPLAY_FIGURES <json>`.
 */
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import { fileURLToPath } from 'node:url'
import { loadConfig } from '../src/config.js'
import { insertRecord } from '../src/domain/recordMaking.js'
import { TimeRecord } from '../src/domain/resources/timeRecord.js'
import type { TenantActor } from '../src/tenants/tenantActor.js'
import { TenantRegistry } from '../src/tenants/tenantRegistry.js'
import { EmbeddedStorage } from '../src/persist/embeddedStorage.js'
import { recoverTenant, recoverTenantInTurns } from '../src/tenants/recovery.js'
import { listSnapshots } from '../src/persist/snapshotFile.js'
import { readSnapshotFile } from '../src/persist/snapshotReading.js'
import { isMainModule, scriptArgs } from './cliOptions.js'
import { seededRandom, timeRecordValues, type ProjectRef } from './dataset.js'
import { copyFixture, readFixtureInfo, type FixtureInfo } from './fixture.js'
import { NO_AUTO_SNAPSHOTS } from './serverProcess.js'

const BURST = 2_000

export interface EngineFigures {
  records: number
  recoveryMs: number
  /** V8 heap and ArrayBuffer bytes together. */
  heapBytesPerRecord: number
  v8HeapBytesPerRecord: number
  arrayBufferBytesPerRecord: number
  decodedRecordBytesPerRecord: number
  snapshotSyncMs: number
  snapshotTotalMs: number
  snapshotBytes: number
  snapshotPeakRssBytes: number
  writeEntries: number
  writesPerSecond: number
  /** The longest one of those writes took to change the state. */
  writeLongestMs: number
  /** Recovery from the snapshot the run wrote (this build's format), in a new process, no log after it. */
  recoveryFromWrittenSnapshotMs: number
  replayEntries: number
  replayMs: number
  replayPerSecond: number
  recoveryWithLogMs: number
  activationInTurnsMs: number
  activationLongestStallMs: number
}

const gc = (globalThis as { gc?: () => void }).gc

const RSS_SAMPLE_MS = 5

/** `pending`'s result and the most resident memory above `rssBefore` seen until it settled, sampled every RSS_SAMPLE_MS. */
async function withPeakRss<T>(pending: Promise<T>, rssBefore: number): Promise<{ result: T; peakRssBytes: number }> {
  let peakRss = rssBefore
  const sample = () => {
    peakRss = Math.max(peakRss, process.memoryUsage().rss)
  }
  const sampler = setInterval(sample, RSS_SAMPLE_MS)
  try {
    const result = await pending
    sample()
    return { result, peakRssBytes: peakRss - rssBefore }
  } finally {
    clearInterval(sampler)
  }
}

/** V8's heap and the ArrayBuffers' bytes after a full collection. */
function memoryUsed(): { heap: number; arrayBuffers: number } {
  if (gc === undefined) throw new Error('run with node --expose-gc')
  gc()
  gc()
  const { heapUsed, arrayBuffers } = process.memoryUsage()
  return { heap: heapUsed, arrayBuffers }
}

function heapUsed(): number {
  const { heap, arrayBuffers } = memoryUsed()
  return heap + arrayBuffers
}

/**
 * Memory taken by the decoded body of the newest snapshot alone: its records (objects and their strings), or, in a
 * snapshot that stores columns (format 6), its columns' arrays and the texts.
 */
function decodedRecordBytes(dataDir: string, tenant: string, records: number): number {
  const newest = listSnapshots(dataDir, tenant)[0]
  if (newest === undefined) throw new Error('the fixture has no snapshot')
  const before = heapUsed()
  const { body } = readSnapshotFile(newest.file)
  const after = heapUsed()
  const held = body.collections[TimeRecord.type]?.length ?? body.columns?.tables.find((table) => table.type === TimeRecord.type)?.rowCount
  if (held !== records) throw new Error(`the snapshot holds ${held ?? 0} time records, the fixture ${records}`)
  return (after - before) / records
}

/**
 * `count` single-record writes, BURST at a time: their rate, and the longest
 * time one write's change of the state took (on a million records the
 * writes take the collection past 2^20 records, where a single Map of them
 * would rehash every entry at once: recordTable.ts).
 */
async function writeSingles(actor: TenantActor, fixture: FixtureInfo, count: number): Promise<{ perSecond: number; longestMs: number }> {
  const random = seededRandom(7)
  const projects: ProjectRef[] = fixture.projects.map((project) => ({ id: project.id, client: '', tasks: [] }))
  let longestMs = 0
  const started = performance.now()
  for (let done = 0; done < count; done += BURST) {
    const burst: Promise<unknown>[] = []
    for (let index = 0; index < Math.min(BURST, count - done); index += 1) {
      const values = { ...timeRecordValues(random, fixture.userIds, projects), client: null, task: null }
      burst.push(
        actor.write((tx) => {
          const writeStarted = performance.now()
          const rec = insertRecord(tx, TimeRecord, values)
          longestMs = Math.max(longestMs, performance.now() - writeStarted)
          return rec
        }),
      )
    }
    await Promise.all(burst)
  }
  return { perSecond: count / ((performance.now() - started) / 1000), longestMs }
}

interface ReplayFigures {
  /** Recovery from the snapshot this run wrote (this build's format), no log after it, in a new process. */
  recoveryFromWrittenMs: number
  replayed: number
  replayMs: number
  totalMs: number
  activationInTurnsMs: number
  activationLongestStallMs: number
}

const STALL_TIMER_MS = 1

/** recoverTenantInTurns, as a server activates a tenant: its time, and the longest gap between two turns of a timer. */
async function timedActivationInTurns(tenant: string, store: EmbeddedStorage): Promise<{ totalMs: number; longestStallMs: number }> {
  let longestStallMs = 0
  let lastTick = performance.now()
  const timer = setInterval(() => {
    const now = performance.now()
    longestStallMs = Math.max(longestStallMs, now - lastTick)
    lastTick = now
  }, STALL_TIMER_MS)
  const started = performance.now()
  try {
    await recoverTenantInTurns(tenant, store)
    const ended = performance.now()
    return { totalMs: ended - started, longestStallMs: Math.max(longestStallMs, ended - lastTick) }
  } finally {
    clearInterval(timer)
  }
}

/** Recovery up to the newest snapshot (its load only, no log entry after it): its time. */
function timedSnapshotRecovery(tenant: string, store: EmbeddedStorage): number {
  const newest = store.snapshots.list(tenant)[0]
  if (newest === undefined) throw new Error('the data directory has no snapshot')
  const started = performance.now()
  const { report } = recoverTenant(tenant, store, { uptoSeq: newest.seq })
  if (report.snapshotSeq !== newest.seq || report.replayedEntries !== 0) throw new Error('the recovery did not come from the newest snapshot alone')
  return performance.now() - started
}

function timedReplay(tenant: string, store: EmbeddedStorage): Omit<ReplayFigures, 'recoveryFromWrittenMs' | 'activationInTurnsMs' | 'activationLongestStallMs'> {
  const started = performance.now()
  let firstProgressAt: number | null = null
  let firstProgressCount = 0
  const { report } = recoverTenant(tenant, store, {
    onProgress: (done) => {
      if (firstProgressAt !== null) return
      firstProgressAt = performance.now()
      firstProgressCount = done
    },
  })
  const ended = performance.now()
  const from = firstProgressAt ?? started
  return { replayed: report.replayedEntries - firstProgressCount, replayMs: ended - from, totalMs: ended - started }
}

/** timedReplay in a new process, on the data dir as this one left it (its log store closed). */
function replayInNewProcess(tenant: string, dataDir: string): ReplayFigures {
  const script = fileURLToPath(import.meta.url)
  const stdout = execFileSync(process.execPath, ['--expose-gc', script, '--replay-of', dataDir, '--tenant', tenant], { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 })
  const line = stdout.split('\n').find((text) => text.startsWith('REPLAY_FIGURES '))
  if (line === undefined) throw new Error(`the replay printed no figures:\n${stdout}`)
  return JSON.parse(line.slice('REPLAY_FIGURES '.length)) as ReplayFigures
}

export async function measureEngineFigures(records: number, replayEntries: number): Promise<EngineFigures> {
  const fixture = readFixtureInfo(records)
  if (fixture === null) throw new Error(`no fixture with ${records} records; run npm run bench:generate -- --records ${records}`)
  const dataDir = copyFixture(records, 'engine')
  const config = loadConfig({ DATA_DIR: dataDir, API_KEYS: 'unused', QUIET: '1', ...NO_AUTO_SNAPSHOTS })
  const store = EmbeddedStorage.open(dataDir, config.lmdbMapSizeBytes)
  let storeOpen = true
  try {
    const decodedRecordBytesPerRecord = decodedRecordBytes(dataDir, fixture.tenant, records)
    const registry = new TenantRegistry(config, store)
    const memoryBefore = memoryUsed()
    const recoveryStarted = performance.now()
    const actor = registry.get(fixture.tenant)
    const recoveryMs = performance.now() - recoveryStarted
    if (actor === undefined) throw new Error('tenant missing')
    const memoryAfter = memoryUsed()
    const v8HeapBytesPerRecord = (memoryAfter.heap - memoryBefore.heap) / records
    const arrayBufferBytesPerRecord = (memoryAfter.arrayBuffers - memoryBefore.arrayBuffers) / records
    const heapBytesPerRecord = v8HeapBytesPerRecord + arrayBufferBytesPerRecord

    const rssBefore = process.memoryUsage().rss
    const snapshotStarted = performance.now()
    const pending = actor.snapshot()
    const snapshotSyncMs = performance.now() - snapshotStarted
    const { result: snapshot, peakRssBytes } = await withPeakRss(pending, rssBefore)

    const writes = await writeSingles(actor, fixture, replayEntries)
    await store.close()
    storeOpen = false
    const replay = replayInNewProcess(fixture.tenant, dataDir)
    return {
      records,
      recoveryMs,
      heapBytesPerRecord,
      v8HeapBytesPerRecord,
      arrayBufferBytesPerRecord,
      decodedRecordBytesPerRecord,
      snapshotSyncMs,
      snapshotTotalMs: snapshot.durationMs,
      snapshotBytes: snapshot.bytes,
      snapshotPeakRssBytes: peakRssBytes,
      writeEntries: replayEntries,
      writesPerSecond: writes.perSecond,
      writeLongestMs: writes.longestMs,
      recoveryFromWrittenSnapshotMs: replay.recoveryFromWrittenMs,
      replayEntries: replay.replayed,
      replayMs: replay.replayMs,
      replayPerSecond: replay.replayed / (replay.replayMs / 1000),
      recoveryWithLogMs: replay.totalMs,
      activationInTurnsMs: replay.activationInTurnsMs,
      activationLongestStallMs: replay.activationLongestStallMs,
    }
  } finally {
    if (storeOpen) await store.close()
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
}

if (isMainModule(import.meta.url)) {
  const args = scriptArgs({
    usage: 'node --expose-gc dist/bench/engineFigures.js [options]',
    about:
      'Engine figures on a copy of the fixture, in process: recovery, heap per record, snapshot, durable writes, replay;\n' +
      'prints ENGINE_FIGURES {json}. With --replay-of: the replay and activation of a data directory after a restart\n' +
      '(REPLAY_FIGURES {json}), as the runner starts it in a new process.',
    options: {
      records: { value: 'n', help: 'time records of the fixture (default 1000000)' },
      replay: { value: 'n', help: 'durable single-record writes after the snapshot (default 200000)' },
      'replay-of': { value: '<data dir>', help: 'measure the replay of this data directory instead' },
      tenant: { value: '<name>', help: 'the tenant to replay (with --replay-of)' },
    },
  })
  const replayOf = args.text('replay-of')
  if (replayOf !== undefined) {
    const tenant = args.text('tenant') ?? args.refuse('--replay-of needs --tenant')
    const config = loadConfig({ DATA_DIR: replayOf, API_KEYS: 'unused', QUIET: '1' })
    const store = EmbeddedStorage.open(replayOf, config.lmdbMapSizeBytes)
    try {
      const recoveryFromWrittenMs = timedSnapshotRecovery(tenant, store)
      gc?.()
      const replay = timedReplay(tenant, store)
      const activation = await timedActivationInTurns(tenant, store)
      const figures: ReplayFigures = { recoveryFromWrittenMs, ...replay, activationInTurnsMs: activation.totalMs, activationLongestStallMs: activation.longestStallMs }
      console.log(`REPLAY_FIGURES ${JSON.stringify(figures)}`)
    } finally {
      await store.close()
    }
  } else {
    const figures = await measureEngineFigures(args.positiveInteger('records', 1_000_000), args.positiveInteger('replay', 200_000))
    console.log(`ENGINE_FIGURES ${JSON.stringify(figures)}`)
  }
}
