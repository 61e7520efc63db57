/*
 * String tables of snapshot slices (format 4): the fields whose values are
 * all texts or null go through the table, `id` and fields holding anything
 * else stay inline; each distinct text is written once; a slice read back
 * through msgpack holds the records it was made from; and a table that does
 * not fit its records is refused.
 */
import t from 'tap'
import { decodeSnapshotSlice, encodeSnapshotBody } from '../../../src/persist/codec.js'
import { resolveStringTable, withStringTable } from '../../../src/persist/sliceStrings.js'

const recs = Array.from({ length: 50 }, (_, index) => ({
  id: `id-${index}`,
  user: `user-${index % 3}`,
  project: index % 5 === 0 ? null : `project-${index % 4}`,
  description: index % 2 === 0 ? 'Support call' : `note ${index}`,
  duration: index * 1000,
  mixed: index === 7 ? 7 : 'seven',
  never: null,
}))

t.test('texts go through the table once each; id and fields with other values stay inline', async (t) => {
  const slice = withStringTable('TimeRecord', recs)
  t.same(slice.fields, ['user', 'project', 'description'])
  t.equal(new Set(slice.strings).size, slice.strings.length, 'each text once')
  t.equal(slice.strings.length, 3 + 4 + 1 + 25)
  const [first] = slice.recs as Record<string, unknown>[]
  t.match(first, { id: 'id-0', project: null, duration: 0, mixed: 'seven', never: null })
  t.equal(typeof first?.user, 'number')
  t.equal(recs[0]?.user, 'user-0', 'the records themselves are left as they were')
})

t.test('a slice read back through msgpack is the records it was made from', async (t) => {
  const decoded = decodeSnapshotSlice(encodeSnapshotBody(withStringTable('TimeRecord', recs))) as Parameters<typeof resolveStringTable>[0]
  t.same(resolveStringTable(decoded), { type: 'TimeRecord', recs })
  t.same(withStringTable('Project', []), { type: 'Project', fields: [], strings: [], recs: [] })
})

t.test('a table that does not fit its records is refused', async (t) => {
  const bad =
    (position: unknown, strings: unknown = ['a', 'b']) =>
    () =>
      resolveStringTable({ type: 'Client', fields: ['name'], strings, recs: [{ id: 'c', name: position }] } as Parameters<typeof resolveStringTable>[0])
  for (const position of [2, -1, 0.5, 'a', true]) t.throws(bad(position), { name: 'SliceStringsError', message: /not a position/ }, `position ${JSON.stringify(position)}`)
  t.throws(bad(0, ['a', 3]), /no string table/)
  t.same(bad(1)(), { type: 'Client', recs: [{ id: 'c', name: 'b' }] })
  t.same(bad(null)(), { type: 'Client', recs: [{ id: 'c', name: null }] })
})
