/*
 * Records replayed from the log are stored in their declaration's shape.
 * msgpackr decodes a format-1 log entry's record (a map) key by key; in a process that has
 * not yet built an object with those keys (a server recovering at start),
 * that leaves an object of some thirty properties in V8's dictionary mode.
 * applyEntry copies it into the declaration's template (recordMaking.ts
 * inRecordShape). Here the decoded record is put into dictionary mode on
 * purpose (a deleted property), and V8's own verdict is read through a
 * natives-syntax function.
 */
import t from 'tap'
import v8 from 'node:v8'
import { buildRecord } from '../../../src/domain/recordMaking.js'
import { TimeRecord } from '../../../src/domain/resources/timeRecord.js'
import type { Rec } from '../../../src/domain/schema.js'
import { LOG_ENTRY_FORMAT } from '../../../src/engine/logEntry.js'
import { TenantState } from '../../../src/engine/tenantState.js'
import { decodeLogEntry, encodePlain } from '../../../src/persist/codec.js'

v8.setFlagsFromString('--allow-natives-syntax')
const hasFastProperties = new Function('object', 'return %HasFastProperties(object)') as (object: object) => boolean

/** The record as a format-1 entry (a map per record, as logs written before format 2 hold it) decodes. */
function decodedPut(rec: Rec): Rec {
  const entry = decodeLogEntry(encodePlain({ v: 1, at: 1, ops: [{ op: 'put', type: 'TimeRecord', rec }] }))
  const op = entry.ops[0]
  if (op?.op !== 'put') throw new Error('not a put')
  return op.rec
}

t.test('a replayed record keeps every value and has fast properties', async (t) => {
  const built = buildRecord(TimeRecord, { start: 1_700_000_000_000, stop: 1_700_003_600_000, description: 'replayed' }, 1_700_000_000_000)
  const decoded = decodedPut(built)
  const description = decoded.description
  delete decoded.description
  decoded.description = description
  t.notOk(hasFastProperties(decoded), 'the record to replay is in dictionary mode (else this test checks nothing)')
  const state = new TenantState('acme')
  state.applyEntry(1, { v: LOG_ENTRY_FORMAT, at: 1, ops: [{ op: 'put', type: 'TimeRecord', rec: decoded }] })
  const stored = state.get('TimeRecord', built.id)
  if (stored === undefined) throw new Error('not stored')
  t.same(stored, built, 'every field as built')
  t.ok(hasFastProperties(stored), 'stored in the fast shape of its declaration')
  t.equal(state.seq, 1)
})

t.test('a logged record without a field declared since gets its default', async (t) => {
  const built = buildRecord(TimeRecord, { start: 1_700_000_000_000, stop: 1_700_003_600_000 }, 1_700_000_000_000)
  const older: Record<string, unknown> = { ...built }
  delete older.billable
  const state = new TenantState('acme')
  state.applyEntry(1, { v: LOG_ENTRY_FORMAT, at: 1, ops: [{ op: 'put', type: 'TimeRecord', rec: decodedPut(older as Rec) }] })
  t.equal(state.get('TimeRecord', built.id)?.billable, built.billable, 'the default, as a new record gets it')
})
