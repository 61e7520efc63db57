/*
 * The snapshot file format: a body encoded in slices across event-loop
 * turns is byte for byte the one encoded at once, a fresh decoder reads it
 * back, and a format 1 file (one msgpack value) still reads.
 */
import crypto from 'node:crypto'
import t from 'tap'
import { encodePlain, encodeSnapshotBody } from '../src/persist/codec.js'
import { buildRecord } from '../src/domain/records.js'
import { resourceByType } from '../src/domain/resources/index.js'
import { decodeSnapshot, encodeSnapshot, encodeSnapshotInSlices, SLICE_RECORDS } from '../src/persist/snapshotFile.js'

const records = Array.from({ length: SLICE_RECORDS * 2 + 17 }, (_, index) =>
  buildRecord(resourceByType('TimeRecord'), { user: `user-${index % 3}`, duration: index, description: index % 2 === 0 ? 'é€😀' : null }, index),
)
const projects = Array.from({ length: 5 }, (_, index) => buildRecord(resourceByType('Project'), { name: `p${index}`, owner: 'user-0' }, 1))
const body = { collections: { TimeRecord: records, Project: projects } }

t.test('slices encode the same bytes and decode with a fresh decoder', async (t) => {
  const atOnce = encodeSnapshot('tenant', 42, 1000, body)
  const inSlices = await encodeSnapshotInSlices('tenant', 42, 1000, body)
  t.ok(atOnce.equals(inSlices))
  const { header, body: decoded } = decodeSnapshot(inSlices)
  t.match(header, { format: 2, tenant: 'tenant', seq: 42, at: 1000 })
  t.same(decoded.collections.TimeRecord, records)
  t.same(decoded.collections.Project, projects)
})

t.test('a format 1 file still reads', async (t) => {
  const bodyBytes = encodeSnapshotBody(body)
  const header = encodePlain({ format: 1, tenant: 'old', seq: 7, at: 5, bodyBytes: bodyBytes.length, sha256: crypto.createHash('sha256').update(bodyBytes).digest('hex') })
  const length = Buffer.alloc(4)
  length.writeUInt32BE(header.length)
  const file = Buffer.concat([Buffer.from('TLSNAP01', 'ascii'), length, header, bodyBytes])
  const { header: read, body: decoded } = decodeSnapshot(file)
  t.equal(read.format, 1)
  t.same(decoded.collections.TimeRecord, records)
})
