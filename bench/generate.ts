/*
 * The data generator: builds the benchmark tenant (see dataset.ts) through
 * the engine's own command path, in this process, without HTTP: open the
 * LMDB store, `registry.create` the tenant with its account and confirmed
 * owner (password OWNER_PASSWORD), then users, clients, projects and tasks,
 * then time records in chunks of CHUNK records per `actor.write` (one log
 * entry, one group commit each), and finally one snapshot, so a server
 * starting on the data loads the snapshot instead of replaying the log. Log
 * entries covered by the snapshot are pruned (LOG_RETENTION_MS=0).
 *
 * The result goes to bench/data/<records>/ (fixture.ts), built in a
 * temporary folder beside it and renamed when complete; an existing fixture
 * is reused.
 *
 *   npm run bench:generate -- [--records 1000000] [--force]
 */
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { loadConfig } from '../src/config.js'
import { hashPassword } from '../src/domain/credentials.js'
import { insertRecord } from '../src/domain/recordMaking.js'
import { Account } from '../src/domain/resources/account.js'
import { Client } from '../src/domain/resources/client.js'
import { Project } from '../src/domain/resources/project.js'
import { Task } from '../src/domain/resources/task.js'
import { TimeRecord } from '../src/domain/resources/timeRecord.js'
import { User } from '../src/domain/resources/user.js'
import { rebuildGlobalIndexesIfOld } from '../src/tenants/globalIndexes.js'
import type { TenantActor } from '../src/tenants/tenantActor.js'
import { TenantRegistry } from '../src/tenants/tenantRegistry.js'
import type { WriteTx } from '../src/engine/writeTx.js'
import { EmbeddedStorage } from '../src/persist/embeddedStorage.js'
import { isMainModule, scriptArgs } from './cliOptions.js'
import * as dataset from './dataset.js'
import { DATA_ROOT, fixtureDir, readFixtureInfo, type FixtureInfo } from './fixture.js'

export const DEFAULT_RECORDS = 1_000_000
const CHUNK = 5_000
const SEED = 20_251_231

interface Skeleton {
  userIds: string[]
  projects: dataset.ProjectRef[]
}

function generationConfig(dataDir: string) {
  return loadConfig({
    DATA_DIR: dataDir,
    API_KEYS: 'unused',
    QUIET: '1',
    SNAPSHOT_EVERY_COMMANDS: '1000000000',
    SNAPSHOT_EVERY_LOG_BYTES: '1000000000000',
    LOG_RETENTION_MS: '0',
    SNAPSHOTS_KEPT: '1',
  })
}

/** Account + confirmed owner, the tenant's first log entry (as sign-up + confirm would leave it). */
async function createTenant(registry: TenantRegistry, passwordHash: string): Promise<string> {
  return registry.create(dataset.BENCH_TENANT, (tx) => {
    const owner = insertRecord(tx, User, {
      firstName: 'Olive',
      lastName: 'Owner',
      email: dataset.OWNER_EMAIL,
      password: passwordHash,
      admin: true,
      active: true,
      confirmed: true,
    })
    insertRecord(tx, Account, { name: 'Bench Ltd', urlPrefix: dataset.BENCH_TENANT, owner: owner.id, confirmed: true, docNumberSequence: 0 })
    return owner.id
  })
}

/** Users, clients, projects and their tasks, in one write. */
function insertSkeleton(tx: WriteTx, ownerId: string): Skeleton {
  const userIds = [ownerId]
  for (let index = 1; index < dataset.USERS; index += 1) userIds.push(insertRecord(tx, User, dataset.userValues(index)).id)
  const clientIds: string[] = []
  for (let index = 0; index < dataset.CLIENTS; index += 1) clientIds.push(insertRecord(tx, Client, dataset.clientValues(index)).id)
  const projects: dataset.ProjectRef[] = []
  for (let index = 0; index < dataset.PROJECTS; index += 1) {
    const client = clientIds[index % clientIds.length] as string
    const owner = userIds[index % userIds.length] as string
    const id = insertRecord(tx, Project, dataset.projectValues(index, client, owner)).id
    const tasks: string[] = []
    for (let taskIndex = 0; taskIndex < dataset.TASKS_PER_PROJECT; taskIndex += 1) {
      tasks.push(insertRecord(tx, Task, dataset.taskValues(index, taskIndex, id, owner)).id)
    }
    projects.push({ id, client, tasks })
  }
  return { userIds, projects }
}

/** Time records in chunks of CHUNK per write; returns the record count per project and one record id. */
async function insertTimeRecords(actor: TenantActor, skeleton: Skeleton, records: number): Promise<{ perProject: Map<string, number>; sampleId: string }> {
  const random = dataset.seededRandom(SEED)
  const perProject = new Map<string, number>()
  let sampleId = ''
  const started = performance.now()
  for (let done = 0; done < records; done += CHUNK) {
    const size = Math.min(CHUNK, records - done)
    await actor.write((tx) => {
      for (let index = 0; index < size; index += 1) {
        const rec = insertRecord(tx, TimeRecord, dataset.timeRecordValues(random, skeleton.userIds, skeleton.projects))
        perProject.set(rec.project as string, (perProject.get(rec.project as string) ?? 0) + 1)
        sampleId ||= rec.id
      }
    })
    const written = done + size
    if (written % 100_000 === 0 || written === records) {
      const seconds = (performance.now() - started) / 1000
      console.log(`  ${written.toLocaleString('en')} time records, ${(written / seconds).toFixed(0)}/s`)
    }
  }
  return { perProject, sampleId }
}

/** Builds a fixture in `dir` (which must not exist yet) and returns its description. */
export async function generateFixture(records: number, dir: string): Promise<FixtureInfo> {
  const started = performance.now()
  const dataDir = path.join(dir, 'data')
  const config = generationConfig(dataDir)
  const store = EmbeddedStorage.open(dataDir, config.lmdbMapSizeBytes)
  try {
    // The empty store gets the current layout of the global indexes at once, as a server start would give it.
    rebuildGlobalIndexesIfOld(store)
    const registry = new TenantRegistry(config, store)
    const ownerId = await createTenant(registry, await hashPassword(dataset.OWNER_PASSWORD, config.passwordCost))
    const actor = registry.get(dataset.BENCH_TENANT)
    if (actor === undefined) throw new Error('the new tenant is not there')
    const skeleton = await actor.write((tx) => insertSkeleton(tx, ownerId))
    const { perProject, sampleId } = await insertTimeRecords(actor, skeleton, records)
    const snapshotStarted = performance.now()
    const snapshot = await actor.snapshot()
    const snapshotMs = performance.now() - snapshotStarted
    console.log(`  snapshot (and pruning the log it covers): ${(snapshotMs / 1000).toFixed(1)} s`)
    const generationMs = performance.now() - started
    return {
      records,
      tenant: dataset.BENCH_TENANT,
      ownerEmail: dataset.OWNER_EMAIL,
      ownerPassword: dataset.OWNER_PASSWORD,
      userIds: skeleton.userIds,
      projects: skeleton.projects.map((project) => ({ id: project.id, records: perProject.get(project.id) ?? 0 })),
      sampleRecordId: sampleId,
      dataFromMs: dataset.DATA_FROM_MS,
      dataToMs: dataset.DATA_TO_MS,
      generatedAt: new Date().toISOString(),
      generationMs,
      snapshotMs,
      snapshotBytes: snapshot.bytes,
    }
  } finally {
    await store.close()
  }
}

/**
 * A fixture written before the global indexes' current layout would make every server started on a copy of
 * it rebuild them (loading the whole tenant) before it listens; the fixture itself is brought up to date
 * once instead. A no-op when it is current.
 */
async function upgradeGlobalIndexes(dataDir: string): Promise<void> {
  const store = EmbeddedStorage.open(dataDir, generationConfig(dataDir).lmdbMapSizeBytes)
  try {
    rebuildGlobalIndexesIfOld(store, (line) => console.log(`  fixture: ${line}`))
  } finally {
    await store.close()
  }
}

/** The fixture for `records`, generated first unless it exists (or `force`). */
export async function ensureFixture(records: number, force = false): Promise<FixtureInfo> {
  const existing = readFixtureInfo(records)
  if (existing !== null && !force) {
    console.log(`fixture with ${records.toLocaleString('en')} time records exists (${fixtureDir(records)}); reusing it`)
    await upgradeGlobalIndexes(path.join(fixtureDir(records), 'data'))
    return existing
  }
  fs.mkdirSync(DATA_ROOT, { recursive: true })
  const temporary = path.join(DATA_ROOT, `${records}.tmp-${process.pid}`)
  fs.rmSync(temporary, { recursive: true, force: true })
  console.log(`generating ${records.toLocaleString('en')} time records into ${fixtureDir(records)} …`)
  const info = await generateFixture(records, temporary)
  fs.writeFileSync(path.join(temporary, 'fixture.json'), `${JSON.stringify(info, null, 2)}\n`)
  fs.rmSync(fixtureDir(records), { recursive: true, force: true })
  fs.renameSync(temporary, fixtureDir(records))
  execFileSync('sync') // so the fixture's writeback does not slow the fsyncs of a benchmark that follows
  const seconds = info.generationMs / 1000
  console.log(`generated ${records.toLocaleString('en')} time records in ${seconds.toFixed(1)} s (${(records / seconds).toFixed(0)} records/s); snapshot ${(info.snapshotBytes / 1e6).toFixed(1)} MB`)
  return info
}

if (isMainModule(import.meta.url)) {
  const args = scriptArgs({
    usage: 'npm run bench:generate -- [options]     (or: node dist/bench/generate.js [options])',
    about:
      'Builds the benchmark tenant `bench` through the engine in process: 50 users, 50 clients, 500 projects, 5 tasks each\n' +
      'and the time records, then a snapshot, into bench/data/<records>/ (a DATA_DIR and fixture.json). Kept and reused:\n' +
      `a fixture that exists is left alone. ${DEFAULT_RECORDS.toLocaleString('en')} records take about 2 minutes and 700 MB.`,
    options: {
      records: { value: 'n', help: `time records (default ${DEFAULT_RECORDS})` },
      force: { help: 'make it again even when it exists' },
    },
  })
  await ensureFixture(args.positiveInteger('records', DEFAULT_RECORDS), args.flag('force'))
}
