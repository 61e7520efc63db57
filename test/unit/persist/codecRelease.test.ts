/*
 * msgpackr keeps the last source it decoded reachable until its next
 * decode (persist/codec.ts). A snapshot file is decoded from one buffer
 * holding the whole file, so the decoders must let that buffer go once
 * they are done: after decoding a snapshot (and a plain value), and with
 * the decoded value still alive, the file's memory is collectable. Binary
 * values of a snapshot come out as copies, not views of the file.
 */
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import t from 'tap'
import { decodePlain, encodePlain } from '../../../src/persist/codec.js'
import { encodeSnapshot, type SnapshotBody } from '../../../src/persist/snapshotFile.js'
import { decodeSnapshot } from '../../../src/persist/snapshotReading.js'

setFlagsFromString('--expose-gc')
const collectGarbage = runInNewContext('gc') as () => void

const arrayBufferBytes = () => process.memoryUsage().arrayBuffers

/** Full collections a few turns apart (V8 frees ArrayBuffer memory on a background thread after the collection). */
async function collectGarbageSoon(): Promise<void> {
  for (let round = 0; round < 3; round += 1) {
    await new Promise((resolve) => setTimeout(resolve, 20))
    collectGarbage()
  }
  await new Promise((resolve) => setTimeout(resolve, 20))
}

/**
 * How many bytes of ArrayBuffer memory are given back when `source`, just
 * decoded by `decode`, is dropped while the decoded value is kept. (The
 * encoder keeps its own output buffer for reuse, so the memory is compared
 * before and after decoding, not with the start.)
 */
async function givenBack<T>(source: { bytes: Buffer | null }, decode: (bytes: Buffer) => T): Promise<{ bytes: number; decoded: T }> {
  await collectGarbageSoon()
  const before = arrayBufferBytes()
  const decoded = decode(source.bytes as Buffer)
  source.bytes = null
  await collectGarbageSoon()
  return { bytes: before - arrayBufferBytes(), decoded }
}

function bigBody(): SnapshotBody {
  const records = Array.from({ length: 20_000 }, (_, index) => ({ id: `r${index}`, description: `record ${index} ${'x'.repeat(1_000)}`, duration: index, start: 1_700_000_000_000 + index }))
  return { collections: { TimeRecord: records, Blob: [{ id: 'b1', bytes: Buffer.from('binary value') }] } } as unknown as SnapshotBody
}

t.test('a decoded snapshot does not hold the file it was decoded from', async (t) => {
  const source = { bytes: Buffer.from(encodeSnapshot('tenant', 7, Date.now(), bigBody())) as Buffer | null }
  const fileBytes = source.bytes?.length ?? 0
  t.ok(fileBytes > 20_000_000, `a file of ${fileBytes} bytes`)
  const { bytes, decoded } = await givenBack(source, decodeSnapshot)
  t.ok(bytes >= 0.9 * fileBytes, `the file's memory is given back while the decoded snapshot lives (${bytes} bytes)`)
  const collections = decoded.body.collections as Record<string, Record<string, unknown>[]>
  t.equal(collections.TimeRecord?.length, 20_000)
  const binary = collections.Blob?.[0]?.bytes as Uint8Array
  t.equal(Buffer.from(binary).toString(), 'binary value', 'a binary value decodes')
  t.equal(binary.buffer.byteLength, binary.byteLength, 'as a copy of its own, not a view of the file')
})

t.test('a decoded plain value does not hold its source', async (t) => {
  // Larger than the snapshot file above, which a decoder that kept its source until the next decode would give back here.
  const source = { bytes: Buffer.from(encodePlain({ header: 'x'.repeat(30_000_000) })) as Buffer | null }
  const sourceBytes = source.bytes?.length ?? 0
  const { bytes, decoded } = await givenBack(source, (plain) => decodePlain(plain) as { header: string })
  t.ok(bytes >= 0.9 * sourceBytes, `the source's memory is given back (${bytes} of ${sourceBytes} bytes)`)
  t.equal(decoded.header.length, 30_000_000)
})
