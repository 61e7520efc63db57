/*
 * The log's entry formats (persist/codec.ts): format 4, written now, is
 * `[4, at, ops, by]` with each put a field list and its values in order
 * (an update also the fields it changed and their values before), a
 * removal of a record the change feed tells saying who could see it
 * (`seenBy`), and who made the write; format 3, the same without `by` and
 * the values before, format 2, also without `seenBy`, and format 1, a map
 * per record, are what logs written before hold. All must replay into the
 * records that were written, in their declaration's shape; a logged field
 * list other than the declaration's (a field declared since, another
 * order) is read by name; anything else is not a log entry.
 */
import t from 'tap'
import v8 from 'node:v8'
import { Packr } from 'msgpackr'
import { buildRecord } from '../../../src/domain/recordMaking.js'
import { Project } from '../../../src/domain/resources/project.js'
import { TimeRecord } from '../../../src/domain/resources/timeRecord.js'
import type { Rec } from '../../../src/domain/schema.js'
import { LOG_ENTRY_FORMAT, type LogEntry } from '../../../src/engine/logEntry.js'
import { TenantState } from '../../../src/engine/tenantState.js'
import { decodeLogEntry, encodeLogEntry, encodePlain } from '../../../src/persist/codec.js'

v8.setFlagsFromString('--allow-natives-syntax')
const hasFastProperties = new Function('object', 'return %HasFastProperties(object)') as (object: object) => boolean

/** A decoder made fresh, with the options the log is written with: what another process or version reads. */
const freshDecoder = () => new Packr({ useRecords: false, mapsAsObjects: true, moreTypes: false })

const NOW = 1_700_000_000_000
const project = buildRecord(Project, { name: 'Relaunch', description: null }, NOW)
const first = buildRecord(TimeRecord, { project: project.id, start: NOW, stop: NOW + 3_600_000, description: 'Planning', price: 12.5 }, NOW)
const second = buildRecord(TimeRecord, { start: NOW + 86_400_000, billable: true }, NOW + 1)

function replayed(...entries: Uint8Array[]): TenantState {
  const state = new TenantState('acme')
  for (const [index, bytes] of entries.entries()) state.applyEntry(index + 1, decodeLogEntry(bytes))
  state.finishLoad()
  return state
}

t.test('format 4: arrays, each put a field list and its values, read by a fresh decoder', async (t) => {
  const entry: LogEntry = {
    v: LOG_ENTRY_FORMAT,
    at: NOW,
    ops: [
      { op: 'put', type: 'Project', rec: project },
      { op: 'put', type: 'TimeRecord', rec: first },
    ],
    by: 'user-1',
  }
  const bytes = encodeLogEntry(entry)
  const wire = freshDecoder().unpack(bytes) as unknown[]
  t.same(wire.slice(0, 2), [4, NOW])
  t.equal(wire[3], 'user-1', 'who made the write')
  t.equal(decodeLogEntry(bytes).by, 'user-1')
  const [, , ops] = wire as [number, number, unknown[][]]
  t.same(ops[1]?.slice(0, 3), ['put', 'TimeRecord', Object.keys(first).join(',')])
  t.same(ops[1]?.[3], Object.values(first), 'the values in the order of the field list')
  const deleted = encodeLogEntry({ v: LOG_ENTRY_FORMAT, at: NOW + 5, ops: [{ op: 'del', type: 'TimeRecord', id: first.id, seenBy: 'all' }] })
  t.same(freshDecoder().unpack(deleted), [4, NOW + 5, [['del', 'TimeRecord', first.id, 'all']], null], 'a removal says who could see the record; no user made it')
  t.equal(decodeLogEntry(deleted).by, null)
  t.same(decodeLogEntry(deleted).ops, [{ op: 'del', type: 'TimeRecord', id: first.id, seenBy: 'all' }])
  const tokenGone = encodeLogEntry({ v: LOG_ENTRY_FORMAT, at: NOW + 5, ops: [{ op: 'del', type: 'AuthToken', id: 'hash' }] })
  t.same(freshDecoder().unpack(tokenGone), [4, NOW + 5, [['del', 'AuthToken', 'hash']], null], 'or not, for a record that is never an event')

  const state = replayed(bytes, encodeLogEntry({ v: LOG_ENTRY_FORMAT, at: NOW + 1, ops: [{ op: 'put', type: 'TimeRecord', rec: second }] }))
  for (const [type, rec] of [
    ['Project', project],
    ['TimeRecord', first],
    ['TimeRecord', second],
  ] as const) {
    const stored = state.get(type, rec.id) as Rec
    t.same(stored, rec, `${type}: every field as written`)
    t.same(Object.keys(stored), Object.keys(rec), `${type}: in the declaration's order`)
    t.ok(hasFastProperties(stored), `${type}: in a fast shape`)
  }
  t.same(
    [...state.collection('TimeRecord').lookup('project', project.id)].map((rec) => rec.id),
    [first.id],
    'indexed',
  )
  const afterDelete = replayed(bytes, deleted)
  t.equal(afterDelete.get('TimeRecord', first.id), undefined, 'a del removes')
})

t.test('format 4: an update carries the fields it changed and their values before', async (t) => {
  const updated = { ...first, description: 'Planning, done', version: 2, updatedAt: NOW + 9 }
  const was = { names: ['description'], values: ['Planning'] }
  const bytes = encodeLogEntry({ v: LOG_ENTRY_FORMAT, at: NOW + 9, ops: [{ op: 'put', type: 'TimeRecord', rec: updated, was }], by: 'user-1' })
  const [, , ops] = freshDecoder().unpack(bytes) as [number, number, unknown[][]]
  t.same(ops[0]?.slice(4), ['description', ['Planning']])
  const decoded = decodeLogEntry(bytes)
  t.same(decoded.ops[0], { op: 'putFields', type: 'TimeRecord', names: Object.keys(updated), values: Object.values(updated), was })
  t.same(replayed(encodeLogEntry({ v: LOG_ENTRY_FORMAT, at: NOW, ops: [{ op: 'put', type: 'TimeRecord', rec: first }] }), bytes).get('TimeRecord', first.id), updated, 'replays into the new record')
})

t.test('format 3: entries written before format 4 still replay, without who made them', async (t) => {
  const names = Object.keys(first)
  const put = encodePlain([3, NOW, [['put', 'TimeRecord', names.join(','), Object.values(first)]]])
  t.same(replayed(put).get('TimeRecord', first.id), first)
  t.equal(decodeLogEntry(put).by, undefined, 'who made it is unknown')
  t.same(decodeLogEntry(encodePlain([3, NOW, [['del', 'TimeRecord', first.id, 'all']]])).ops, [{ op: 'del', type: 'TimeRecord', id: first.id, seenBy: 'all' }])
})

t.test('format 2: entries written before format 3 still replay, their removals without seenBy', async (t) => {
  const names = Object.keys(first)
  const put = encodePlain([2, NOW, [['put', 'TimeRecord', names.join(','), Object.values(first)]]])
  const del = encodePlain([2, NOW + 5, [['del', 'TimeRecord', first.id]]])
  t.same(replayed(put).get('TimeRecord', first.id), first)
  t.same(decodeLogEntry(del).ops, [{ op: 'del', type: 'TimeRecord', id: first.id }])
  t.equal(replayed(put, del).get('TimeRecord', first.id), undefined)
})

t.test('format 1: entries written before format 2 still replay into the same records', async (t) => {
  const state = replayed(
    encodePlain({
      v: 1,
      at: NOW,
      ops: [
        { op: 'put', type: 'TimeRecord', rec: first },
        { op: 'put', type: 'TimeRecord', rec: second },
      ],
    }),
  )
  t.same(state.get('TimeRecord', first.id), first)
  t.same(state.get('TimeRecord', second.id), second)
  const removed = replayed(encodePlain({ v: 1, at: NOW, ops: [{ op: 'put', type: 'TimeRecord', rec: first }] }), encodePlain({ v: 1, at: NOW, ops: [{ op: 'del', type: 'TimeRecord', id: first.id }] }))
  t.equal(removed.get('TimeRecord', first.id), undefined)
})

t.test('a field list other than the declaration’s is read by name; a field it lacks gets its default', async (t) => {
  const names = Object.keys(first)
    .filter((name) => name !== 'effective')
    .reverse()
  const bytes = encodePlain([2, NOW, [['put', 'TimeRecord', names.join(','), names.map((name) => first[name])]]])
  const stored = replayed(bytes).get('TimeRecord', first.id) as Rec
  t.same(stored, first, 'effective is true by default, as written')
  t.same(Object.keys(stored), Object.keys(first), 'in the declaration’s order')
})

t.test('anything else is not a log entry', async (t) => {
  const list = Object.keys(first).join(',')
  const notEntries: [string, unknown][] = [
    ['a format it does not know', [5, NOW, [], null]],
    ['format 4 without who made it', [4, NOW, []]],
    ['a user that is no text', [4, NOW, [], 7]],
    ['values before in format 3', [3, NOW, [['put', 'TimeRecord', list, Object.values(first), 'description', ['x']]]]],
    ['values before that do not match their fields', [4, NOW, [['put', 'TimeRecord', list, Object.values(first), 'description', []]], null]],
    ['a seenBy in format 2', [2, NOW, [['del', 'TimeRecord', first.id, 'all']]]],
    ['a seenBy that is no text', [3, NOW, [['del', 'TimeRecord', first.id, 7]]]],
    ['a del with a fifth element', [3, NOW, [['del', 'TimeRecord', first.id, 'all', 'x']]]],
    ['a time that is not a number', [2, 'now', []]],
    ['ops that are not a list', [2, NOW, {}]],
    ['a fourth element', [2, NOW, [], 1]],
    ['an unknown operation', [2, NOW, [['patch', 'TimeRecord', first.id]]]],
    ['a put with fewer values than fields', [2, NOW, [['put', 'TimeRecord', list, [1, 2]]]]],
    ['a put without a field list', [2, NOW, [['put', 'TimeRecord', null, []]]]],
    ['a del without an id', [2, NOW, [['del', 'TimeRecord']]]],
    ['an operation that is not a list', [2, NOW, [{ op: 'del', type: 'TimeRecord', id: first.id }]]],
    ['a map without ops', { v: 1, at: NOW }],
    ['a map of format 2', { v: 2, at: NOW, ops: [] }],
    ['a map of format 3', { v: 3, at: NOW, ops: [] }],
    ['a string', 'entry'],
  ]
  for (const [what, value] of notEntries) t.throws(() => decodeLogEntry(encodePlain(value)), /not a log entry/, what)
})
