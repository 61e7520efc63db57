/*
 * Where generated benchmark data lives and what it says about itself.
 *
 *   bench/data/<records>/data/          a DATA_DIR: ledger.mdb + snapshots/
 *   bench/data/<records>/fixture.json   FixtureInfo (tenant, owner login, ids)
 *
 * A fixture is complete when fixture.json exists (the generator renames a
 * finished temporary folder into place). Runs never write into a fixture:
 * copyFixture() makes a throwaway copy of its DATA_DIR first.
 */
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

export interface FixtureProject {
  id: string
  /** Time records on the project. */
  records: number
}

export interface FixtureInfo {
  records: number
  tenant: string
  ownerEmail: string
  ownerPassword: string
  userIds: string[]
  projects: FixtureProject[]
  /** A time record id (for PUT). */
  sampleRecordId: string
  dataFromMs: number
  dataToMs: number
  generatedAt: string
  generationMs: number
  /** The final snapshot, with the pruning of the log it covers. */
  snapshotMs?: number
  snapshotBytes: number
}

/** dist/bench/fixture.js → <repo>/bench/data/ */
export const DATA_ROOT = fileURLToPath(new URL('../../bench/data/', import.meta.url))

/** `root`: another checkout's bench/data/ (the guard reads the fixture an older build generated in its own tree). */
export function fixtureDir(records: number, root = DATA_ROOT): string {
  return path.join(root, String(records))
}

export function fixtureDataDir(records: number, root = DATA_ROOT): string {
  return path.join(fixtureDir(records, root), 'data')
}

export function readFixtureInfo(records: number, root = DATA_ROOT): FixtureInfo | null {
  const file = path.join(fixtureDir(records, root), 'fixture.json')
  return fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as FixtureInfo) : null
}

/**
 * A throwaway copy of the fixture's DATA_DIR (remove it with fs.rmSync when
 * done). The copy is flushed to disk before it is used (`sync`): otherwise
 * the kernel writes its hundreds of MB back while the write scenarios run,
 * and every fsync of the log waits behind that.
 */
export function copyFixture(records: number, label = 'run'): string {
  const target = fs.mkdtempSync(path.join(os.tmpdir(), `timeledger-bench-${label}-`))
  fs.cpSync(fixtureDataDir(records), target, { recursive: true })
  execFileSync('sync')
  return target
}
