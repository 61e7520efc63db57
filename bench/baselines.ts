/*
 * The two raw-stack baselines, as a reusable measurement: what bare uWS can
 * serve from memory (GET) and what bare uWS + one flushed lmdb put per
 * request can acknowledge (POST). Each baseline server runs as its own child
 * process (dist/bench/baselines/*.js, found relative to this module) only
 * while it is measured; the figures give the ceilings against which the
 * service's own benchmark figures are read. `measureSameBytes` runs the
 * first one with a scenario's own answer as the body, for scenarios whose
 * answers are far larger than the fixed one (a list of 100 records).
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { open } from 'lmdb'
import { freePort, runLoad, startProcess, wrkAvailable, type LoadOptions, type LoadResult, type LoadTool } from './loadgen.js'
import type { PortPicker } from './portRange.js'
import { withCpuPerRequest } from './processCpu.js'

export interface BaselineOptions {
  connections: number
  durationSeconds: number
  /** Unmeasured load first, for the JIT and page cache (default 1 s; 0 = none). */
  warmupSeconds?: number
  tool?: LoadTool
  /** Parent of the temporary LMDB env (default: os.tmpdir()); fsync must be real there. */
  lmdbParentDir?: string
  /** Where the baseline servers listen (default: any free port). */
  ports?: PortPicker
}

export interface BaselineFigure extends LoadResult {
  /** bare-get, lmdb-put, or same-bytes:<scenario>. */
  name: string
  /** The baseline server's CPU time per request (processCpu.ts); null where it cannot be read. */
  cpuMicrosPerRequest: number | null
  description: string
  method: string
  connections: number
  durationSeconds: number
}

export interface BaselineReport {
  at: string
  machine: { cpuModel: string; cpus: number; node: string; platform: string }
  lmdbDir: string
  figures: BaselineFigure[]
}

/** ~300 bytes, shaped like a time entry. */
export const BASELINE_POST_BODY = JSON.stringify({
  projectId: 'prj_V1StGXR8_Z5jdHi6B-myT',
  userId: 'usr_9rT2kLm4Qp_ZxW8vB3nYc',
  start: '2025-03-02T08:00:00.000Z',
  end: '2025-03-02T11:30:00.000Z',
  billable: true,
  tags: ['design', 'meeting'],
  note: 'Workshop with the client about the navigation and the landing page.',
})

/** The compiled baseline server `file` (bareGetServer.js, lmdbPutServer.js). */
export const baselineScript = (file: string): string => fileURLToPath(new URL(`./baselines/${file}`, import.meta.url))

interface Scenario {
  name: string
  description: string
  script: string
  extraArgs: string[]
  method: string
  body?: string
  expectStatus: number
  /** Runs after the server stopped; throws when the run did not do what it claims. */
  verify?: (measured: LoadResult) => void
}

export async function measureBaselines(opts: BaselineOptions): Promise<BaselineReport> {
  const tool = opts.tool ?? (wrkAvailable() ? 'wrk' : 'autocannon')
  const lmdbDir = fs.mkdtempSync(path.join(opts.lmdbParentDir ?? os.tmpdir(), 'lmdb-put-baseline-'))
  const figures: BaselineFigure[] = []
  try {
    figures.push(
      await measure(opts, tool, {
        name: 'bare-get',
        description: 'bare uWS, fixed JSON from memory',
        script: 'bareGetServer.js',
        extraArgs: [],
        method: 'GET',
        expectStatus: 200,
      }),
    )
    figures.push(
      await measure(opts, tool, {
        name: 'lmdb-put',
        description: 'bare uWS + one lmdb put per request, 201 after flushed',
        script: 'lmdbPutServer.js',
        extraArgs: [lmdbDir],
        method: 'POST',
        body: BASELINE_POST_BODY,
        expectStatus: 201,
        verify: (measured) => verifyStored(lmdbDir, measured.requests),
      }),
    )
  } finally {
    fs.rmSync(lmdbDir, { recursive: true, force: true })
  }
  const cpus = os.cpus()
  return {
    at: new Date().toISOString(),
    machine: { cpuModel: cpus[0]?.model ?? 'unknown', cpus: cpus.length, node: process.version, platform: `${process.platform}-${process.arch}` },
    lmdbDir,
    figures,
  }
}

/** Bare uWS answering every GET with the bytes of `bodyFile` (a scenario's own answer), under the same load. */
export async function measureSameBytes(opts: BaselineOptions, scenarioName: string, bodyFile: string): Promise<BaselineFigure> {
  const bytes = fs.statSync(bodyFile).size
  return measure(opts, opts.tool ?? (wrkAvailable() ? 'wrk' : 'autocannon'), {
    name: `same-bytes:${scenarioName}`,
    description: `bare uWS answering the ${bytes.toLocaleString('en')} bytes of one ${scenarioName} answer from memory`,
    script: 'bareGetServer.js',
    extraArgs: [bodyFile],
    method: 'GET',
    expectStatus: 200,
  })
}

async function measure(opts: BaselineOptions, tool: LoadTool, scenario: Scenario): Promise<BaselineFigure> {
  const port = await (opts.ports?.next() ?? freePort())
  const server = await startProcess(process.execPath, [baselineScript(scenario.script), String(port), ...scenario.extraArgs])
  let result: LoadResult & { cpuMicrosPerRequest: number | null }
  try {
    const load: LoadOptions = {
      url: `http://127.0.0.1:${server.port}/api/projects`,
      method: scenario.method,
      connections: opts.connections,
      durationSeconds: opts.durationSeconds,
      pipelining: 1,
      tool,
      ...(scenario.body === undefined ? {} : { body: scenario.body, headers: { 'Content-Type': 'application/json' } }),
    }
    await checkOnce(load, scenario.expectStatus)
    const warmup = opts.warmupSeconds ?? 1
    if (warmup > 0) await runLoad({ ...load, durationSeconds: warmup })
    result = await withCpuPerRequest(server.pid, () => runLoad(load))
  } finally {
    await server.stop()
  }
  scenario.verify?.(result)
  const { name, description, method } = scenario
  return { name, description, method, connections: opts.connections, durationSeconds: opts.durationSeconds, ...result }
}

/** One request first, so a broken server fails loudly instead of producing a figure. */
async function checkOnce(load: LoadOptions, expectStatus: number): Promise<void> {
  const response = await fetch(load.url, { method: load.method, headers: load.headers ?? {}, body: load.body ?? null })
  await response.arrayBuffer()
  if (response.status !== expectStatus) throw new Error(`${load.method} ${load.url}: expected ${expectStatus}, got ${response.status}`)
}

/** Every acknowledged POST must be in the env (guards against e.g. a load tool silently sending GETs). */
function verifyStored(lmdbDir: string, acknowledged: number): void {
  const db = open<Buffer, number>({ path: path.join(lmdbDir, 'baseline.mdb'), encoding: 'binary', readOnly: true })
  try {
    const stored = db.getKeysCount()
    if (stored < acknowledged) throw new Error(`lmdb-put: ${acknowledged} POSTs acknowledged but only ${stored} records stored`)
  } finally {
    void db.close()
  }
}
