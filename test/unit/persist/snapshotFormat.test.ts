/*
 * The snapshot file format: a body encoded in slices across event-loop
 * turns, or written to a file a slice at a time, is byte for byte the one
 * encoded at once (the writer holds one slice in memory and leaves no
 * file behind when it fails), a fresh decoder reads it back from memory
 * and from a file, with the derived state it keeps (format 5: a slice per
 * part), and format 4 files (no derived state), format 3 files (slices
 * without string tables), format 2 files (slices without lengths) and
 * format 1 files (one msgpack value) still read. A file is read a slice at
 * a time, never whole; a torn or damaged one (a byte flipped, a slice
 * length running past the end, a short file, a string table that does not
 * fit its records) is refused as invalid.
 */
import crypto from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import t from 'tap'
import { encodePlain, encodeSnapshotBody } from '../../../src/persist/codec.js'
import { buildRecord } from '../../../src/domain/recordMaking.js'
import { resourceByType } from '../../../src/domain/resources/index.js'
import { withStringTable } from '../../../src/persist/sliceStrings.js'
import { encodeSnapshot, encodeSnapshotInSlices, writeSnapshotInSlices } from '../../../src/persist/snapshotFile.js'
import { decodeSnapshot, readSnapshotFile, snapshotFileSteps } from '../../../src/persist/snapshotReading.js'
import { type SnapshotBody, SnapshotInvalidError } from '../../../src/persist/ports.js'
import { SNAPSHOT_FORMAT } from '../../../src/persist/snapshotHeader.js'
import { SLICE_RECORDS } from '../../../src/persist/snapshotSlices.js'

const records = Array.from({ length: SLICE_RECORDS * 2 + 17 }, (_, index) =>
  buildRecord(resourceByType('TimeRecord'), { user: `user-${index % 3}`, duration: index, description: index % 2 === 0 ? 'é€😀' : null }, index),
)
const projects = Array.from({ length: 5 }, (_, index) => buildRecord(resourceByType('Project'), { name: `p${index}`, owner: 'user-0' }, 1))
const body = { collections: { TimeRecord: records, Project: projects } }
const derived = {
  totals: [
    { format: 1, zone: 'UTC' },
    { group: 'p', sums: Buffer.from([1, 2, 3]) },
  ],
  other: [[1, 2]],
}

t.test('slices encode the same bytes and decode with a fresh decoder', async (t) => {
  for (const snapshotBody of [body, { ...body, derived }]) {
    const atOnce = encodeSnapshot('tenant', 42, 1000, snapshotBody)
    const inSlices = await encodeSnapshotInSlices('tenant', 42, 1000, snapshotBody)
    t.ok(atOnce.equals(inSlices))
    const { header, body: decoded } = decodeSnapshot(inSlices)
    t.match(header, { format: SNAPSHOT_FORMAT, tenant: 'tenant', seq: 42, at: 1000 })
    t.same(decoded.collections.TimeRecord, records)
    t.same(decoded.collections.Project, projects)
    t.same(decoded.derived, snapshotBody === body ? {} : derived, 'the derived state, part by part')
  }
})

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'snapshot-format-'))
t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))

t.test('a snapshot written a slice at a time is the file encoded at once, whatever its numbers', async (t) => {
  const bodies: SnapshotBody[] = [{ collections: {} }, { collections: { Project: projects } }, body, { ...body, derived }]
  const numbers = [
    [1, 0],
    [300, 1000],
    [2 ** 40, Date.now()],
    [Number.MAX_SAFE_INTEGER, 2 ** 52],
  ] as const
  for (const [index, snapshotBody] of bodies.entries()) {
    for (const [seq, at] of numbers) {
      const folder = path.join(dir, `written-${index}-${seq}`)
      const { file, bytes } = await writeSnapshotInSlices(folder, 'tenant', seq, at, snapshotBody)
      const written = fs.readFileSync(file)
      t.ok(written.equals(encodeSnapshot('tenant', seq, at, snapshotBody)), `body ${index}, seq ${seq}: the same bytes`)
      t.equal(bytes, written.length)
      t.match(readSnapshotFile(file).header, { format: SNAPSHOT_FORMAT, tenant: 'tenant', seq, at, bodyBytes: written.length - 12 - written.readUInt32BE(8) })
      t.same(fs.readdirSync(folder), [path.basename(file)], 'no temporary file is left')
    }
  }
})

t.test('the writer writes each slice before it encodes the next, and a failed write leaves no file', async (t) => {
  const folder = path.join(dir, 'progress')
  const temporarySizes: number[] = []
  const { file } = await writeSnapshotInSlices(folder, 'tenant', 9, 1000, body, () => {
    const [temporary] = fs.readdirSync(folder)
    temporarySizes.push(fs.statSync(path.join(folder, temporary as string)).size)
  })
  t.equal(temporarySizes.length, 5, 'the frame (no collection is large enough for columns), three slices of time records and one of projects')
  t.ok(
    temporarySizes.every((size, index) => index === 0 || size > (temporarySizes[index - 1] as number)),
    `the file grows: ${temporarySizes.join(', ')}`,
  )
  t.ok((temporarySizes[1] as number) > SLICE_RECORDS * 10, 'the first slice is on disk before the next is encoded')
  t.ok((temporarySizes.at(-1) as number) < fs.statSync(file).size + 1, 'and the header is written last, into its room')

  const failing = path.join(dir, 'failing')
  const unencodable = {
    get duration(): number {
      throw new Error('cannot read this record')
    },
  }
  const broken = { collections: { TimeRecord: [...records.slice(0, SLICE_RECORDS), unencodable] } }
  await t.rejects(writeSnapshotInSlices(failing, 'tenant', 10, 1000, broken), /cannot read this record/)
  t.same(fs.readdirSync(failing), [], 'neither the snapshot nor its temporary file')
})

/** `bytes` behind its uint32 length, as formats 3 on write each slice. */
function lengthPrefixed(bytes: Buffer): Buffer[] {
  const length = Buffer.alloc(4)
  length.writeUInt32BE(bytes.length)
  return [length, bytes]
}

/** A file of an older format around `bodyBytes`. */
function olderFile(format: number, bodyBytes: Buffer): Buffer {
  const header = encodePlain({ format, tenant: 'old', seq: 7, at: 5, bodyBytes: bodyBytes.length, sha256: crypto.createHash('sha256').update(bodyBytes).digest('hex') })
  const length = Buffer.alloc(4)
  length.writeUInt32BE(header.length)
  return Buffer.concat([Buffer.from('TLSNAP01', 'ascii'), length, header, bodyBytes])
}

function written(name: string, bytes: Buffer): string {
  const file = path.join(dir, name)
  fs.writeFileSync(file, bytes)
  return file
}

t.test('format 1, 2, 3 and 4 files still read, in memory and from a file', async (t) => {
  const slices = [
    { type: 'TimeRecord', recs: records.slice(0, SLICE_RECORDS) },
    { type: 'TimeRecord', recs: records.slice(SLICE_RECORDS) },
    { type: 'Project', recs: projects },
  ]
  const files = [
    [1, olderFile(1, encodeSnapshotBody(body))],
    [2, olderFile(2, Buffer.concat(slices.map((slice) => encodeSnapshotBody(slice))))],
    [3, olderFile(3, Buffer.concat(slices.flatMap((slice) => lengthPrefixed(encodeSnapshotBody(slice)))))],
    [4, olderFile(4, Buffer.concat(slices.flatMap((slice) => lengthPrefixed(encodeSnapshotBody(withStringTable(slice.type, slice.recs))))))],
  ] as const
  for (const [format, file] of files) {
    for (const { header, body: decoded } of [decodeSnapshot(file), readSnapshotFile(written(`format${format}.tlsnap`, file))]) {
      t.equal(header.format, format)
      t.same(decoded.collections.TimeRecord, records, `format ${format}: the records`)
      t.same(decoded.collections.Project, projects)
    }
  }
})

t.test('a file is read a slice at a time, not whole', async (t) => {
  const file = written('current.tlsnap', encodeSnapshot('tenant', 42, 1000, { ...body, derived }))
  const readWhole = fs.readFileSync
  fs.readFileSync = (() => {
    throw new Error('read whole')
  }) as typeof fs.readFileSync
  try {
    const { header, body: decoded } = readSnapshotFile(file)
    t.match(header, { format: SNAPSHOT_FORMAT, seq: 42 })
    t.same(decoded.collections.TimeRecord, records)
    t.same(decoded.collections.Project, projects)
    t.same(decoded.derived, derived)
  } finally {
    fs.readFileSync = readWhole
  }
})

t.test('the reader pauses after every slice, and its steps give what readSnapshotFile gives', async (t) => {
  const file = written('steps.tlsnap', encodeSnapshot('tenant', 42, 1000, body))
  const steps = snapshotFileSteps(file)
  let pauses = 0
  let next = steps.next()
  for (; next.done !== true; next = steps.next()) pauses += 1
  const slices = Math.ceil(records.length / SLICE_RECORDS) + 1
  t.ok(pauses >= slices * 2, `${pauses} pauses for ${slices} slices, read and put together`)
  t.same(next.value, readSnapshotFile(file))
})

t.test('a damaged or torn file is refused', async (t) => {
  const good = encodeSnapshot('tenant', 42, 1000, body)
  const headerEnd = 12 + good.readUInt32BE(8)
  const flipped = Buffer.from(good)
  flipped[headerEnd + 5000] = (flipped[headerEnd + 5000] as number) ^ 0x55
  const longSlice = Buffer.from(good)
  longSlice.writeUInt32BE(good.length, headerEnd)
  const cases: [string, Buffer, RegExp][] = [
    ['a byte flipped inside a slice', flipped, /checksum mismatch|does not decode/],
    ['a slice length past the end', longSlice, /runs past the end/],
    ['the last 100 bytes missing', good.subarray(0, good.length - 100), /body is \d+ bytes, header says/],
    ['only part of the header', good.subarray(0, headerEnd - 3), /truncated header/],
    ['eight bytes', good.subarray(0, 8), /ends early/],
  ]
  /** The error `read` throws (null when it throws none). */
  const refusal = (read: () => unknown): unknown => {
    try {
      read()
      return null
    } catch (error) {
      return error
    }
  }
  // Checksums right, but a record's position is past its slice's table, or the slice has no table.
  const project = projects[0] as Record<string, unknown>
  const pastTable = olderFile(4, Buffer.concat(lengthPrefixed(encodeSnapshotBody({ type: 'Project', fields: ['name'], strings: ['p0'], recs: [{ ...project, name: 1 }] }))))
  const noTable = olderFile(4, Buffer.concat(lengthPrefixed(encodeSnapshotBody({ type: 'Project', recs: [project] }))))
  cases.push(['a position past the string table', pastTable, /Project\.name holds 1, not a position in the slice's 1 strings/])
  cases.push(['a slice without a string table', noTable, /the slice has no string table/])
  for (const [what, bytes, message] of cases) {
    const file = written('damaged.tlsnap', bytes)
    const fromFile = refusal(() => readSnapshotFile(file))
    t.ok(fromFile instanceof SnapshotInvalidError && message.test(fromFile.message), `${what}: ${String(fromFile)}`)
    if (bytes.length >= 12) t.ok(refusal(() => decodeSnapshot(bytes)) instanceof SnapshotInvalidError, `${what}, in memory`)
  }
})
