/*
 * What compressing answers costs, to choose the levels and the threshold of
 * src/http/compression.ts (bench/RESULTS.md, "Compression").
 *
 * A real server (dist/src/cli.js serve, a throwaway data directory) gets a
 * tenant with --records time records (batches of 100). Then:
 *
 *   1. levels: the list answer of 1000 records ($top=1000, references
 *      expanded) compressed in this process with gzip levels 1–6 and 9 and
 *      brotli qualities 0–6 and 11: CPU ms per answer and bytes;
 *   2. sizes: the first 256, 512 and 1024 bytes of it, and the list at $top
 *      1, 2, 5, 20, 100: the answer's bytes, the server's CPU per
 *      uncompressed answer, and what brotli and gzip at the chosen levels
 *      add to it;
 *   3. end to end: the server's CPU per request (from /proc, one connection,
 *      --requests sequential GETs) for the 1000-record list sent as it is,
 *      gzip and brotli, as the ratio to the uncompressed answer.
 *
 *   npm run build && node dist/bench/compression.js [--records 1000] [--requests 100]
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import zlib from 'node:zlib'
import { BROTLI_QUALITY, compressBytes, GZIP_LEVEL } from '../src/http/compression.js'
import { scriptArgs } from './cliOptions.js'
import { BenchClient, withQuery } from './httpClient.js'
import { signUpAndLogin } from './mixedLoad.js'
import { processCpuMicros } from './processCpu.js'
import { timeRecordBody } from './scenarios.js'
import { startServer, type BenchServer } from './serverProcess.js'

const TENANT = 'compress'
const BATCH_SIZE = 100

interface Options {
  records: number
  requests: number
}

function parseOptions(): Options {
  const args = scriptArgs({
    usage: 'node dist/bench/compression.js [options]',
    about: 'What brotli and gzip cost on the list of 1000 time records, by level and by answer size, in process and end to end.',
    options: {
      records: { value: 'n', help: 'time records in the tenant (default 1000; the list answer takes at most 1000)' },
      requests: { value: 'n', help: 'sequential requests per server figure (default 300)' },
    },
  })
  return { records: args.positiveInteger('records', 1000), requests: args.positiveInteger('requests', 300) }
}

/** CPU ms of this process per call of `work`, over enough calls to take about 300 ms. */
function cpuMsPerCall(work: () => void): number {
  work()
  let calls = 0
  const started = process.cpuUsage()
  const wall = performance.now()
  while (performance.now() - wall < 300 || calls < 3) {
    work()
    calls += 1
  }
  const used = process.cpuUsage(started)
  return (used.user + used.system) / 1000 / calls
}

/** The server's CPU µs per request over `count` sequential requests on one connection. */
async function serverCpuMicrosPerRequest(server: BenchServer, client: BenchClient, path: string, headers: Record<string, string>, count: number): Promise<number> {
  for (let index = 0; index < 5; index += 1) await client.expect(200, 'GET', path, { tenant: TENANT, headers })
  const before = processCpuMicros(server.pid) ?? Number.NaN
  for (let index = 0; index < count; index += 1) await client.expect(200, 'GET', path, { tenant: TENANT, headers })
  return ((processCpuMicros(server.pid) ?? Number.NaN) - before) / count
}

async function fill(client: BenchClient, token: string, records: number): Promise<void> {
  const project = await client.expect(201, 'POST', withQuery('/v1/time/projects', { token }), { tenant: TENANT, body: JSON.stringify({ name: 'Compressed project' }) })
  const projectId = project.json.id as string
  for (let done = 0; done < records; done += BATCH_SIZE) {
    const items = Array.from({ length: Math.min(BATCH_SIZE, records - done) }, (_, index) => ({
      id: `r${index}`,
      method: 'POST',
      path: '/v1/time/timerecords',
      body: timeRecordBody(projectId, done + index),
    }))
    await client.expect(200, 'POST', withQuery('/v1/batch', { token }), { tenant: TENANT, body: JSON.stringify(items) })
  }
}

function row(cells: (string | number)[]): string {
  return `| ${cells.join(' | ')} |`
}

async function main(): Promise<void> {
  const options = parseOptions()
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'timeledger-bench-compression-'))
  const server = await startServer({ dataDir })
  const client = new BenchClient(server.port)
  try {
    const token = await signUpAndLogin(client, TENANT)
    await fill(client, token, options.records)
    const listPath = (top: number) => withQuery('/v1/time/timerecords', { token, $top: top })
    const list = Buffer.from((await client.expect(200, 'GET', listPath(1000), { tenant: TENANT })).text)
    const cpus = os.cpus()
    console.log(`${cpus.length} × ${cpus[0]?.model ?? 'unknown CPU'}, node ${process.version}; list of ${Math.min(options.records, 1000)} time records: ${list.byteLength} bytes\n`)

    console.log('### Levels (the whole list, compressed in process)\n')
    console.log(row(['coding', 'CPU ms per answer', 'bytes', '% of the answer']))
    console.log(row(['---', '---:', '---:', '---:']))
    for (const level of [1, 2, 3, 4, 5, 6, 9]) {
      const bytes = zlib.gzipSync(list, { level }).byteLength
      console.log(row([`gzip ${level}`, cpuMsPerCall(() => zlib.gzipSync(list, { level })).toFixed(2), bytes, ((100 * bytes) / list.byteLength).toFixed(1)]))
    }
    for (const quality of [0, 1, 2, 3, 4, 5, 6, 11]) {
      const params = { [zlib.constants.BROTLI_PARAM_QUALITY]: quality, [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT }
      const bytes = zlib.brotliCompressSync(list, { params }).byteLength
      console.log(row([`brotli ${quality}`, cpuMsPerCall(() => zlib.brotliCompressSync(list, { params })).toFixed(2), bytes, ((100 * bytes) / list.byteLength).toFixed(1)]))
    }

    console.log(`\n### Sizes (brotli ${BROTLI_QUALITY}, gzip ${GZIP_LEVEL} in process; the server's CPU per uncompressed answer over ${options.requests} requests)\n`)
    console.log(row(['$top', 'bytes', 'server µs per answer', 'brotli µs', 'brotli bytes', 'gzip µs', 'gzip bytes']))
    console.log(row(['---:', '---:', '---:', '---:', '---:', '---:', '---:']))
    for (const prefix of [256, 512, 1024]) {
      const body = list.subarray(0, prefix)
      const brMicros = 1000 * cpuMsPerCall(() => compressBytes(body, 'br'))
      const gzipMicros = 1000 * cpuMsPerCall(() => compressBytes(body, 'gzip'))
      console.log(row([`(first ${prefix} bytes)`, prefix, '', brMicros.toFixed(0), compressBytes(body, 'br').byteLength, gzipMicros.toFixed(0), compressBytes(body, 'gzip').byteLength]))
    }
    for (const top of [1, 2, 5, 20, 100]) {
      const body = Buffer.from((await client.expect(200, 'GET', listPath(top), { tenant: TENANT })).text)
      const serverMicros = await serverCpuMicrosPerRequest(server, client, listPath(top), {}, options.requests)
      const brMicros = 1000 * cpuMsPerCall(() => compressBytes(body, 'br'))
      const gzipMicros = 1000 * cpuMsPerCall(() => compressBytes(body, 'gzip'))
      console.log(row([top, body.byteLength, serverMicros.toFixed(0), brMicros.toFixed(0), compressBytes(body, 'br').byteLength, gzipMicros.toFixed(0), compressBytes(body, 'gzip').byteLength]))
    }

    console.log(`\n### End to end (the server's CPU per request for the whole list, ${options.requests} sequential requests each)\n`)
    console.log(row(['Accept-Encoding', 'server CPU ms per request', 'ratio to uncompressed']))
    console.log(row(['---', '---:', '---:']))
    const plain = await serverCpuMicrosPerRequest(server, client, listPath(1000), {}, options.requests)
    console.log(row(['(none)', (plain / 1000).toFixed(2), '1.00']))
    for (const coding of ['gzip', 'br']) {
      const micros = await serverCpuMicrosPerRequest(server, client, listPath(1000), { 'accept-encoding': coding }, options.requests)
      console.log(row([coding, (micros / 1000).toFixed(2), (micros / plain).toFixed(2)]))
    }
  } finally {
    client.close()
    await server.stop()
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
}

await main()
