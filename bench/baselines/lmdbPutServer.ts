/*
 * Baseline 2: the fastest the stack can acknowledge a durable write. A bare
 * uWebSockets.js server that, for `POST /*`, reads the body (copying every
 * onData chunk, which uWS frees when the callback returns), does ONE lmdb put
 * (key: an increasing integer, value: the body bytes) and answers 201 only
 * after that put's `flushed` promise — the commit is on disk (ARCHITECTURE.md §7; the
 * env is opened with `separateFlushed: true`, never `noSync`). lmdb-js groups
 * the puts of one event-loop turn into one transaction, so this measures
 * group commit + fsync, the ceiling for any acknowledged write of the service.
 * `GET /*` answers a fixed body.
 *
 * Usage: node dist/bench/baselines/lmdbPutServer.js [port] [lmdbDir]
 *        (or PORT=…, LMDB_DIR=…). Without a directory a temporary one is
 *        created and removed on SIGTERM/SIGINT. Prints `READY <port>`.
 */
import fs from 'node:fs'
import { createRequire } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import { open } from 'lmdb'
import type * as UwsTypes from 'uWebSockets.js'
import { scriptArgs } from '../cliOptions.js'

type Uws = typeof UwsTypes
/** With `separateFlushed`, a put's promise resolves on commit and carries `flushed` for the fsync. */
type PutPromise = Promise<boolean> & { flushed: Promise<unknown> }

function loadNativeUws(): Uws {
  const binary = `uWebSockets.js/binaries/uws_${process.platform}_${process.arch}_${process.versions.modules}.node`
  return createRequire(import.meta.url)(binary) as Uws
}

const args = scriptArgs({
  usage: 'node dist/bench/baselines/lmdbPutServer.js [port] [lmdb dir]',
  about:
    'Baseline 2: bare uWebSockets.js doing one flushed LMDB put per POST. Prints READY <port> once listening (port: the\nargument, else PORT, else any free one; the store in the given folder, else LMDB_DIR, else a temporary one).',
  options: {},
  positionals: ['[port]', '[lmdb dir]'],
  startedBy: 'the benchmark runner (baselines.ts)',
})
const port = Number(args.positionals[0] ?? process.env.PORT ?? 0)
const givenDir = args.positionals[1] ?? process.env.LMDB_DIR
const dir = givenDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'lmdb-put-baseline-'))
fs.mkdirSync(dir, { recursive: true })

const db = open<Buffer, number>({
  path: path.join(dir, 'baseline.mdb'),
  encoding: 'binary',
  compression: false,
  separateFlushed: true,
  noSync: false,
})
let nextKey = 0

const uws = loadNativeUws()
const app = uws.App()

app.get('/*', (res) => {
  res.writeHeader('Content-Type', 'application/json').end('{"ok":true}')
})

app.post('/*', (res) => {
  let aborted = false
  res.onAborted(() => {
    aborted = true
  })
  const chunks: Buffer[] = []
  res.onData((chunk, isLast) => {
    chunks.push(Buffer.from(new Uint8Array(chunk))) // a copy: uWS neuters `chunk` on return
    if (!isLast) return
    const [first] = chunks
    const body = chunks.length === 1 && first !== undefined ? first : Buffer.concat(chunks)
    void durablePut(body).then(
      () => reply('201 Created', '{"ok":true}'),
      (error: unknown) => reply('500 Internal Server Error', JSON.stringify({ error: String(error) })),
    )
  })

  function reply(status: string, json: string): void {
    if (aborted) return
    res.cork(() => {
      res.writeStatus(status).writeHeader('Content-Type', 'application/json').end(json)
    })
  }
})

async function durablePut(body: Buffer): Promise<void> {
  nextKey += 1
  const put = db.put(nextKey, body) as PutPromise
  await put // committed (rejects if the put failed)
  await put.flushed // on disk
}

app.listen('127.0.0.1', port, (listenSocket) => {
  if (listenSocket === false) {
    console.error(`lmdbPutServer: cannot listen on port ${port}`)
    process.exit(1)
  }
  console.log(`READY ${uws.us_socket_local_port(listenSocket as unknown as UwsTypes.us_socket)}`)
  let stopping = false
  const stop = (): void => {
    if (stopping) return
    stopping = true
    uws.us_listen_socket_close(listenSocket)
    void db.close().finally(() => {
      if (givenDir === undefined) fs.rmSync(dir, { recursive: true, force: true })
      process.exit(0)
    })
  }
  process.once('SIGTERM', stop)
  process.once('SIGINT', stop)
})
