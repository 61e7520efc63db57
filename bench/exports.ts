/*
 * The cost of an export (issue 29): every time record of the fixture's
 * tenant (100,000 by default) downloaded as CSV and as XLSX, against the
 * same records as the JSON list gives them — pages of 1000, its largest,
 * read one after the other ($skip). Each measurement runs on a server of
 * its own (serverProcess.ts, automatic snapshots off, no heavy-read budget:
 * a hundred $skip pages in a row would exceed it) started on one copy
 * of the fixture: log in, activate the tenant, let it settle, read its
 * resident memory, then download while a sampler reads /proc/<pid>/status
 * every SAMPLE_MS. Figures: time to the answer's head (for an export also
 * its first chunk: the head waits for it), total time, the server's CPU
 * time (user + system, /proc), bytes, chunks, and the server's peak RSS
 * above what it held before the download.
 *
 *   node dist/bench/exports.js [--records 100000] [--rounds 2]
 */
import fs from 'node:fs'
import http from 'node:http'
import { scriptArgs } from './cliOptions.js'
import { copyFixture, readFixtureInfo } from './fixture.js'
import { processCpuMicros } from './processCpu.js'
import { rssOf, rssSampler } from './rssSampler.js'
import { BenchClient, hostOf } from './httpClient.js'
import { ownerLogin } from './scenarios.js'
import { NO_AUTO_SNAPSHOTS, startServer, type BenchServer } from './serverProcess.js'

const SETTLE_MS = 1000
const JSON_PAGE = 1000

interface Download {
  headMs: number
  totalMs: number
  bytes: number
  chunks: number
  status: number
}

/** One GET read to its end, timed from the request to the head and to the last byte. */
function download(port: number, tenant: string, path: string): Promise<Download> {
  const started = performance.now()
  return new Promise((resolve, reject) => {
    const request = http.get({ host: '127.0.0.1', port, path, headers: { host: hostOf(tenant, port) }, agent: false }, (response) => {
      const headMs = performance.now() - started
      let bytes = 0
      let chunks = 0
      response.on('data', (chunk: Buffer) => {
        bytes += chunk.byteLength
        chunks += 1
      })
      response.on('end', () => resolve({ headMs, totalMs: performance.now() - started, bytes, chunks, status: response.statusCode ?? 0 }))
      response.on('error', reject)
    })
    request.setTimeout(600_000, () => request.destroy(new Error(`${path} timed out`)))
    request.on('error', reject)
  })
}

interface Way {
  name: string
  /** Downloads the records; several requests add up (the JSON pages). */
  run(port: number, tenant: string, token: string, records: number): Promise<Download>
}

const WAYS: readonly Way[] = [
  {
    name: `JSON list, pages of ${JSON_PAGE}`,
    async run(port, tenant, token, records) {
      const total: Download = { headMs: 0, totalMs: 0, bytes: 0, chunks: 0, status: 200 }
      for (let skip = 0; skip < records; skip += JSON_PAGE) {
        const page = await download(port, tenant, `/v1/time/timerecords?token=${token}&$top=${JSON_PAGE}&$skip=${skip}`)
        if (skip === 0) total.headMs = page.headMs
        total.totalMs += page.totalMs
        total.bytes += page.bytes
        total.chunks += page.chunks
        if (page.status !== 200) total.status = page.status
      }
      return total
    },
  },
  { name: 'CSV', run: (port, tenant, token) => download(port, tenant, `/v1/time/timerecords?token=${token}&format=csv`) },
  { name: 'XLSX', run: (port, tenant, token) => download(port, tenant, `/v1/time/timerecords?token=${token}&format=xlsx`) },
  // Half the rows: the peak memory of a streamed export does not grow with its rows.
  { name: 'XLSX, half ($top)', run: (port, tenant, token, records) => download(port, tenant, `/v1/time/timerecords?token=${token}&format=xlsx&$top=${records / 2}`) },
  { name: 'CSV, half ($top)', run: (port, tenant, token, records) => download(port, tenant, `/v1/time/timerecords?token=${token}&format=csv&$top=${records / 2}`) },
]

async function measure(way: Way, dataDir: string, tenant: string, login: (server: BenchServer) => Promise<string>, records: number) {
  const server = await startServer({ dataDir, env: { ...NO_AUTO_SNAPSHOTS, TENANT_HEAVY_READ_MS_PER_S: '0' } })
  try {
    const token = await login(server)
    await download(server.port, tenant, `/v1/time/timerecords/$count?token=${token}`)
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS))
    const before = rssOf(server.pid)
    const cpuBefore = processCpuMicros(server.pid) ?? 0
    const peak = rssSampler(server.pid)
    const result = await way.run(server.port, tenant, token, records)
    const peakRss = peak()
    const cpuMs = ((processCpuMicros(server.pid) ?? 0) - cpuBefore) / 1000
    if (result.status !== 200) throw new Error(`${way.name} answered ${result.status}`)
    return { ...result, cpuMs, beforeRss: before, peakAboveMb: (peakRss - before) / 2 ** 20 }
  } finally {
    await server.stop()
  }
}

const args = scriptArgs({
  usage: 'node dist/bench/exports.js [options]',
  about:
    "The cost of an export: every time record of a fixture as CSV and as XLSX against the JSON list's pages of 1000\n(time to the head, total time, server CPU, peak RSS), each on a server of its own.",
  options: {
    records: { value: 'n', help: 'the fixture (bench/data/<n>/, made by npm run bench:generate) (default 100000)' },
    rounds: { value: 'n', help: 'rounds (default 2)' },
  },
})
const records = args.positiveInteger('records', 100_000)
const rounds = args.positiveInteger('rounds', 2)
const fixture = readFixtureInfo(records)
if (fixture === null) throw new Error(`no fixture with ${records} records; run npm run bench:generate -- --records ${records}`)
const dataDir = copyFixture(records, 'exports')
const login = async (server: BenchServer) => {
  const client = new BenchClient(server.port)
  try {
    return (await ownerLogin(client, fixture)).token
  } finally {
    client.close()
  }
}
try {
  console.log(`${records} time records, ${rounds} round(s), a server of its own per measurement`)
  console.log('| way | round | head ms | total ms | server CPU ms | MB sent | chunks | RSS before MB | peak RSS above it MB |')
  console.log('|---|---|---|---|---|---|---|---|---|')
  for (let round = 1; round <= rounds; round += 1) {
    for (const way of WAYS) {
      const figures = await measure(way, dataDir, fixture.tenant, login, records)
      console.log(
        `| ${way.name} | ${round} | ${figures.headMs.toFixed(1)} | ${figures.totalMs.toFixed(0)} | ${figures.cpuMs.toFixed(0)} | ${(figures.bytes / 2 ** 20).toFixed(1)} | ${figures.chunks} | ${(figures.beforeRss / 2 ** 20).toFixed(0)} | ${figures.peakAboveMb.toFixed(1)} |`,
      )
    }
  }
} finally {
  fs.rmSync(dataDir, { recursive: true, force: true })
}
