/*
 * The writer of streamed bodies (src/http/streamedAnswer.ts) against a
 * recording stand-in for uWS's HttpResponse: the head goes out with the
 * first chunk, a full socket makes it wait for onWritable, a client that
 * leaves while it waits ends the source (its `finally` runs), a source that
 * fails before its first chunk leaves the answer to the caller, and one that
 * fails later closes the connection.
 */
import t from 'tap'
import { writeStreamed, type StreamedExchange } from '../../../src/http/streamedAnswer.js'
import { StreamedBody } from '../../../src/http/streamedBody.js'
import type { HttpResponse } from '../../../src/http/uws.js'

class RecordingResponse {
  readonly events: string[] = []
  /** What write answers: false says the socket's buffer is full. */
  acceptWrites = true
  writableHandler: ((offset: number) => boolean) | null = null

  cork(callback: () => void): this {
    callback()
    return this
  }
  write(chunk: Buffer): boolean {
    this.events.push(`write ${chunk.toString()}`)
    return this.acceptWrites
  }
  end(_body?: unknown, close?: boolean): this {
    this.events.push(`end${close === true ? ' close' : ''}`)
    return this
  }
  close(): this {
    this.events.push('close')
    return this
  }
  onWritable(handler: (offset: number) => boolean): this {
    this.events.push('wait')
    this.writableHandler = handler
    return this
  }
}

function exchange(): StreamedExchange & { clientGone: boolean } {
  return { clientGone: false, onAbort: null }
}

async function* chunks(texts: readonly string[], cleanup: string[] = [], failAt = -1): AsyncGenerator<Buffer, void, undefined> {
  try {
    for (const [index, text] of texts.entries()) {
      if (index === failAt) throw new Error('the source failed')
      yield Buffer.from(text)
    }
    if (failAt === texts.length) throw new Error('the source failed')
  } finally {
    cleanup.push('source released')
  }
}

const asUws = (res: RecordingResponse) => res as unknown as HttpResponse
const head = (res: RecordingResponse) => () => res.events.push('head')

t.test('the head with the first chunk, then every chunk, then the end', async (t) => {
  const res = new RecordingResponse()
  const outcome = await writeStreamed(asUws(res), exchange(), new StreamedBody(chunks(['a', 'bb', 'ccc'])), head(res), false)
  t.same(outcome, { kind: 'sent', bytes: 6 })
  t.same(res.events, ['head', 'write a', 'write bb', 'write ccc', 'end'])
})

t.test('an empty source: the head and the end', async (t) => {
  const res = new RecordingResponse()
  const outcome = await writeStreamed(asUws(res), exchange(), new StreamedBody(chunks([])), head(res), true)
  t.same(outcome, { kind: 'sent', bytes: 0 })
  t.same(res.events, ['head', 'end close'])
})

t.test('a full socket: the next chunk is pulled only once it is writable', async (t) => {
  const res = new RecordingResponse()
  res.acceptWrites = false
  const writing = writeStreamed(asUws(res), exchange(), new StreamedBody(chunks(['a', 'b'])), head(res), false)
  await new Promise((resolve) => setImmediate(resolve))
  t.same(res.events, ['head', 'write a', 'wait'], 'waits after the first chunk')
  res.acceptWrites = true
  t.equal(res.writableHandler?.(1), true)
  t.same(await writing, { kind: 'sent', bytes: 2 })
  t.same(res.events, ['head', 'write a', 'wait', 'write b', 'end'])
})

t.test('a client leaving while the writer waits ends the source', async (t) => {
  const res = new RecordingResponse()
  res.acceptWrites = false
  const state = exchange()
  const cleanup: string[] = []
  const writing = writeStreamed(asUws(res), state, new StreamedBody(chunks(['a', 'b', 'c'], cleanup)), head(res), false)
  await new Promise((resolve) => setImmediate(resolve))
  state.clientGone = true
  state.onAbort?.()
  t.same(await writing, { kind: 'clientGone', bytes: 1 })
  t.same(cleanup, ['source released'], "the source's finally ran")
  t.notOk(res.events.includes('end'), 'nothing more is written')
})

t.test('a source failing before its first chunk leaves the answer to the caller', async (t) => {
  const res = new RecordingResponse()
  const outcome = await writeStreamed(asUws(res), exchange(), new StreamedBody(chunks(['a'], [], 0)), head(res), false)
  t.equal(outcome.kind, 'failedBeforeHead')
  t.same(res.events, [], 'nothing written')
})

t.test('a source failing after the head closes the connection', async (t) => {
  const res = new RecordingResponse()
  const outcome = await writeStreamed(asUws(res), exchange(), new StreamedBody(chunks(['a', 'b'], [], 2)), head(res), false)
  t.match(outcome, { kind: 'failedAfterHead', bytes: 2 })
  t.same(res.events, ['head', 'write a', 'write b', 'close'])
})
