/*
 * Puts a fixture's tenant into a cluster database, the way an operator
 * would: the CLI's `export` on a throwaway copy of the fixture's DATA_DIR
 * (embedded mode), then the CLI's `import --from` with DATABASE_URL set
 * (cluster mode: one snapshot written to PostgreSQL in parts, the tenant's
 * directory rows, no log replay). Both run as child processes of the
 * compiled CLI; their wall times are part of the figures. The export file
 * is kept for further imports until remove() is called.
 */
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { clusterSettings } from './clusterNodes.js'
import { copyFixture } from './fixture.js'
import { BENCH_API_KEY } from './serverProcess.js'

const CLI = fileURLToPath(new URL('../src/cli.js', import.meta.url))
/** The longest an export or an import of the million-record tenant may take on a busy machine. */
const CLI_TIMEOUT_MS = 30 * 60_000

export interface TenantExport {
  readonly file: string
  readonly bytes: number
  readonly exportMs: number
  remove(): void
}

async function runCli(args: readonly string[], env: Record<string, string>): Promise<number> {
  const started = performance.now()
  await promisify(execFile)(process.execPath, [CLI, ...args], { env: { ...process.env, QUIET: '1', API_KEYS: BENCH_API_KEY, ...env }, maxBuffer: 16 * 1024 * 1024, timeout: CLI_TIMEOUT_MS })
  return performance.now() - started
}

/** Exports `tenant` of the `records` fixture (from a copy) to a file. */
export async function exportFixtureTenant(records: number, tenant: string): Promise<TenantExport> {
  const dataDir = copyFixture(records, 'export')
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'timeledger-bench-export-'))
  const file = path.join(dir, `${tenant}.tlexport`)
  try {
    const exportMs = await runCli(['export', tenant, '--out', file], { DATA_DIR: dataDir })
    return { file, bytes: fs.statSync(file).size, exportMs, remove: () => fs.rmSync(dir, { recursive: true, force: true }) }
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
}

/** Imports an export file into the cluster database; the wall time in ms. */
export async function importIntoCluster(file: string, databaseUrl: string): Promise<number> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'timeledger-bench-import-'))
  try {
    return await runCli(['import', '--from', file], { DATA_DIR: dataDir, ...clusterSettings(databaseUrl, 'bench-import', null) })
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
}
