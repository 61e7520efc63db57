/*
 * Baseline 1: the fastest the HTTP stack can answer. A bare uWebSockets.js
 * server that answers every `GET /*` with a fixed ~300-byte JSON body held in
 * memory, synchronously inside the handler (no abort handler or cork needed).
 * Given a file, it answers with that file's bytes instead: the runner uses
 * this to serve a scenario's own answer (a page of 100 time records is
 * 276 KB), so the scenario can be compared with the same bytes from memory.
 * The native uWS binary is loaded directly so the run can never silently use
 * the package's slow `ws` fallback.
 *
 * Usage: node dist/bench/baselines/bareGetServer.js [port] [body file]   (or PORT=…; 0 = any)
 * Prints `READY <port>` on stdout once listening; exits on SIGTERM/SIGINT.
 */
import fs from 'node:fs'
import { createRequire } from 'node:module'
import type * as UwsTypes from 'uWebSockets.js'
import { scriptArgs } from '../cliOptions.js'

type Uws = typeof UwsTypes

function loadNativeUws(): Uws {
  const binary = `uWebSockets.js/binaries/uws_${process.platform}_${process.arch}_${process.versions.modules}.node`
  return createRequire(import.meta.url)(binary) as Uws
}

/** Shaped like a project object of the service. */
const FIXED_BODY = Buffer.from(
  JSON.stringify({
    id: 'prj_V1StGXR8_Z5jdHi6B-myT',
    name: 'Website relaunch 2025',
    clientId: 'cli_4f90d13a42_Qx7bN2mPa',
    color: '#3b82f6',
    billable: true,
    hourlyRate: 9500,
    currency: 'EUR',
    budgetMinutes: 24000,
    archived: false,
    createdAt: '2025-01-14T09:30:00.000Z',
    updatedAt: '2025-03-02T16:45:12.000Z',
    version: 7,
  }),
)

const args = scriptArgs({
  usage: 'node dist/bench/baselines/bareGetServer.js [port] [body file]',
  about:
    'Baseline 1: bare uWebSockets.js answering every GET with a fixed JSON body, or the bytes of the given file.\nPrints READY <port> once listening (port: the argument, else PORT, else any free one); exits on SIGTERM/SIGINT.',
  options: {},
  positionals: ['[port]', '[body file]'],
  startedBy: 'the benchmark runner (baselines.ts)',
})
const port = Number(args.positionals[0] ?? process.env.PORT ?? 0)
const bodyFile = args.positionals[1]
const BODY = bodyFile === undefined ? FIXED_BODY : fs.readFileSync(bodyFile)
const uws = loadNativeUws()

const app = uws.App().get('/*', (res) => {
  res.writeHeader('Content-Type', 'application/json').end(BODY)
})

app.listen('127.0.0.1', port, (listenSocket) => {
  if (listenSocket === false) {
    console.error(`bareGetServer: cannot listen on port ${port}`)
    process.exit(1)
  }
  console.log(`READY ${uws.us_socket_local_port(listenSocket as unknown as UwsTypes.us_socket)}`)
  const stop = (): void => {
    uws.us_listen_socket_close(listenSocket)
    process.exit(0)
  }
  process.once('SIGTERM', stop)
  process.once('SIGINT', stop)
})
