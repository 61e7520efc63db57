/*
 * The span a time record completes on a write (domain/timeSpan.ts, the
 * TimeRecord declaration's deriveOnWrite), through the domain operations
 * without HTTP: derived from what the write gives, at the write's time,
 * whatever its origin (a create, an update, a price update); a record
 * stored before the rule (put as it was, with a start and a stop and no
 * duration) keeps it until its next write, which stores the duration.
 */
import t from 'tap'
import { createObject } from '../../../src/domain/operations/createObject.js'
import { updatePrice } from '../../../src/domain/operations/prices.js'
import { updateObject } from '../../../src/domain/operations/updateObject.js'
import { buildRecord } from '../../../src/domain/recordMaking.js'
import { Impulse } from '../../../src/domain/resources/impulse.js'
import { TimeRecord } from '../../../src/domain/resources/timeRecord.js'
import { completedTimeSpan } from '../../../src/domain/timeSpan.js'
import type { Rec } from '../../../src/domain/schema.js'
import { domainTenant, NOW } from '../../helpers/domainState.js'

const HOUR_MS = 3_600_000
const span = (start: number | null, stop: number | null, duration: number | null) => ({ start, stop, duration }) as unknown as Rec

t.test('the rule: what the write gives wins, the one it leaves out follows', async (t) => {
  t.same(completedTimeSpan(span(0, HOUR_MS, null), { start: 0, stop: HOUR_MS }), { duration: HOUR_MS }, 'start and stop: the duration')
  t.same(completedTimeSpan(span(0, null, HOUR_MS), { start: 0, duration: HOUR_MS }), { stop: HOUR_MS }, 'start and duration: the stop')
  t.same(completedTimeSpan(span(0, HOUR_MS, HOUR_MS), { start: 0, stop: HOUR_MS, duration: HOUR_MS }), {}, 'all three agreeing: nothing')
  t.same(completedTimeSpan(span(0, HOUR_MS, 5), { start: 0, stop: HOUR_MS, duration: 5 }), {}, 'all three disagreeing: left to the check')
  t.same(completedTimeSpan(span(0, 2 * HOUR_MS, HOUR_MS), { duration: HOUR_MS }), { stop: HOUR_MS }, 'a changed duration moves the stop')
  t.same(completedTimeSpan(span(0, 2 * HOUR_MS, HOUR_MS), { stop: 2 * HOUR_MS }), { duration: 2 * HOUR_MS }, 'a changed stop moves the duration')
  t.same(completedTimeSpan(span(HOUR_MS, 2 * HOUR_MS, 2 * HOUR_MS), { start: HOUR_MS }), { stop: 3 * HOUR_MS }, 'a changed start moves the record: the stop follows')
  t.same(completedTimeSpan(span(5 * HOUR_MS, 2 * HOUR_MS, HOUR_MS), { start: 5 * HOUR_MS }), { stop: 6 * HOUR_MS }, 'past the old stop too')
  t.same(completedTimeSpan(span(0, 2 * HOUR_MS, HOUR_MS), { start: 0, stop: 2 * HOUR_MS }), { duration: 2 * HOUR_MS }, 'a start and a stop given: the duration')
  t.same(completedTimeSpan(span(0, HOUR_MS, HOUR_MS), { stop: null }), {}, 'a cleared stop gets its value back from the duration (here unchanged)')
  t.same(completedTimeSpan(span(0, null, HOUR_MS), { stop: null }), { stop: HOUR_MS }, 'a cleared stop comes back from the duration')
  t.same(completedTimeSpan(span(0, HOUR_MS, null), { description: 'x' }), { duration: HOUR_MS }, 'any other write completes a record stored without it')
  t.same(completedTimeSpan(span(HOUR_MS / 2, HOUR_MS, null), { start: HOUR_MS / 2 }), { duration: HOUR_MS / 2 }, 'without a duration, a changed start changes it')
  t.same(completedTimeSpan(span(2 * HOUR_MS, HOUR_MS, null), { stop: HOUR_MS }), {}, 'a stop before the start: left to the check')
  t.same(completedTimeSpan(span(0, null, -5), { duration: -5 }), {}, 'a negative duration: left to the check')
  t.same(completedTimeSpan(span(0, null, null), { start: 0 }), {}, 'a start alone stays open')
  t.same(completedTimeSpan(span(null, null, HOUR_MS), { duration: HOUR_MS }), {}, 'a bare duration is kept')
  t.same(completedTimeSpan(span(null, HOUR_MS, null), { stop: HOUR_MS }), {}, 'a stop without a start is kept')
})

t.test('a create and an update store it; a price is calculated from the completed record', async (t) => {
  const { owner, write } = domainTenant()
  const rec = write((tx) => createObject(tx, owner, TimeRecord, { start: NOW, stop: NOW + HOUR_MS }))
  t.equal(rec.duration, HOUR_MS, 'created with start and stop')
  const moved = write((tx) => updateObject(tx, owner, TimeRecord, rec.id, { duration: 2 * HOUR_MS }, rec.version))
  t.same([moved.stop, moved.duration], [NOW + 2 * HOUR_MS, 2 * HOUR_MS], 'updated with a duration')
  const priced = write((tx) => updateObject(tx, owner, TimeRecord, rec.id, { stop: NOW + 3 * HOUR_MS }, moved.version, (candidate) => ({ price: (candidate.duration as number) / HOUR_MS })))
  t.same([priced.duration, priced.price], [3 * HOUR_MS, 3], 'a write option sees the derived duration')
})

t.test('a record stored before the rule keeps its missing duration until its next write', async (t) => {
  const { state, owner, write } = domainTenant()
  const legacy = write((tx) => {
    const stored = buildRecord(TimeRecord, { user: owner.userId, start: NOW, stop: NOW + HOUR_MS, billable: true }, NOW)
    tx.put('TimeRecord', stored)
    return stored
  })
  t.equal(state.get('TimeRecord', legacy.id)?.duration, null, 'as it was stored')
  const touched = write((tx) => updatePrice(tx, owner, TimeRecord, legacy.id))
  t.equal(touched.duration, HOUR_MS, 'its next write (here $updateprice) stores it')
})

t.test('an impulse: a stopwatch without start and stop starts at the write time', async (t) => {
  const { owner, write } = domainTenant()
  const started = write((tx) => createObject(tx, owner, Impulse, {}), NOW + 7)
  t.same([started.mode, started.start, started.createdAt], ['STOPWATCH', NOW + 7, NOW + 7])
  const paused = write((tx) => createObject(tx, owner, Impulse, { mode: 'PAUSE' }))
  t.equal(paused.start, null, 'a PAUSE impulse is kept as given')
  const resumed = write((tx) => updateObject(tx, owner, Impulse, paused.id, { mode: 'STOPWATCH' }, 'any'), NOW + 50)
  t.equal(resumed.start, NOW + 50, 'made a stopwatch by an update: it starts then')
})
