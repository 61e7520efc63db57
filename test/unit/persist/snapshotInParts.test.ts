/*
 * A snapshot handed out in parts as it is made (snapshotFile.ts
 * snapshotInParts, which cluster mode stores a part at a time): the parts,
 * joined and given the header, are the bytes of encodeSnapshot, each of the
 * size asked but the last; the first goes out before the last records are
 * encoded; the header's room is zeroed until the writer fills it.
 */
import crypto from 'node:crypto'
import t from 'tap'
import { buildRecord } from '../../../src/domain/recordMaking.js'
import { resourceByType } from '../../../src/domain/resources/index.js'
import { encodeSnapshot, snapshotInParts } from '../../../src/persist/snapshotFile.js'
import { headerOf, headerPart } from '../../../src/persist/snapshotHeader.js'

const RECORDS = 3000
const records = Array.from({ length: RECORDS }, (_, index) =>
  buildRecord(resourceByType('TimeRecord'), { start: 1000 + index, stop: 2000 + index, description: crypto.randomBytes(100).toString('hex') }, 1),
)
const body = { collections: { TimeRecord: records } }

t.test('the parts, joined and given the header, are the snapshot encoded at once', async (t) => {
  const whole = encodeSnapshot('tenant', 42, 1000, body)
  for (const partBytes of [4096, 65_536, 1024 * 1024, whole.length, whole.length + 1]) {
    const parts: Buffer[] = []
    let recordsAtFirstPart: number | null = null
    let recordsDone = 0
    const encoding = snapshotInParts('tenant', 1000, body, partBytes, (done) => {
      recordsDone = done
    })
    let next = await encoding.next()
    for (; next.done !== true; next = await encoding.next()) {
      recordsAtFirstPart ??= recordsDone
      parts.push(Buffer.from(next.value))
    }
    const header = headerPart(headerOf('tenant', 42, 1000, next.value.bodyBytes, next.value.sha256))
    t.ok(
      parts[0]?.subarray(0, header.length).every((byte) => byte === 0),
      `parts of ${partBytes}: the header's room is zeroed`,
    )
    t.ok(
      parts.slice(0, -1).every((part) => part.length === partBytes),
      'every part but the last of the size asked',
    )
    const joined = Buffer.concat(parts)
    header.copy(joined, 0)
    t.ok(joined.equals(whole), 'the bytes encoded at once')
    if (partBytes < whole.length / 4) t.ok((recordsAtFirstPart ?? RECORDS) < RECORDS, `the first part goes out after ${recordsAtFirstPart} of the ${RECORDS} records`)
  }
})
