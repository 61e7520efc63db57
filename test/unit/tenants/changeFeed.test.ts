/*
 * The tenant's change feed (src/tenants/changeFeed.ts) without HTTP:
 * entries told durable out of order are handed out in order, and only in
 * the turn's check phase, after the promise reactions that answer the
 * writes (a write's caller hears of it before any subscriber); a subscriber
 * resuming from `since` (an entry, or a place inside one) reads the log,
 * then gets live entries, with no gap and no duplicate, even while entries
 * arrive during its read; a log that no longer holds what follows `since`
 * ends it (historyGone); a reset ends every subscription.
 */
import t from 'tap'
import type { EventTexts, Change } from '../../../src/domain/changes.js'
import { buildRecord } from '../../../src/domain/recordMaking.js'
import { resourceByType } from '../../../src/domain/resources/index.js'
import type { LogEntry, LoggedEntry } from '../../../src/engine/logEntry.js'
import { TenantState } from '../../../src/engine/tenantState.js'
import type { TenantLog } from '../../../src/persist/ports.js'
import { ChangeFeed, type ChangeSubscriber, type FeedEnd } from '../../../src/tenants/changeFeed.js'

const Tag = resourceByType('Tag')

/** An entry creating `count` tags. */
function entryOf(count: number): LogEntry {
  return { v: 2, at: 1, ops: Array.from({ length: count }, () => ({ op: 'put' as const, type: 'Tag', rec: buildRecord(Tag, { name: 'x', color: '#000000' }, 1) })) }
}

/** A log holding entries by sequence number; reads resolve on the next turn, as a store's would. */
function fakeLog(entries: Map<number, LogEntry>): TenantLog {
  return {
    readEntries: async (_tenant: string, afterSeq: number, maxEntries: number) => {
      await new Promise((resolve) => setImmediate(resolve))
      return [...entries.keys()]
        .filter((seq) => seq > afterSeq)
        .sort((a, b) => a - b)
        .slice(0, maxEntries)
        .map((seq) => ({ seq, entry: entries.get(seq) as LoggedEntry }))
    },
    hasEntry: (_tenant: string, seq: number) => entries.has(seq),
  } as unknown as TenantLog
}

class Recorder implements ChangeSubscriber {
  closed = false
  readonly got: string[] = []
  endedWith: FeedEnd | null = null
  deliver(changes: readonly Change[], _texts: EventTexts): void {
    for (const change of changes) this.got.push(`${change.seq}.${change.op}`)
  }
  ended(reason: FeedEnd): void {
    this.endedWith = reason
    this.closed = true
  }
  ready(): boolean {
    return true
  }
  whenReady(): Promise<void> {
    return Promise.resolve()
  }
}

const state = new TenantState('acme')

/** Until the feed handed out what was told durable (its check phase: after every promise reaction of the turn). */
const handedOut = () => new Promise((resolve) => setImmediate(resolve))

t.test('entries told out of order are handed out in order', async (t) => {
  const feed = new ChangeFeed('acme', fakeLog(new Map()), 0, () => state)
  const live = new Recorder()
  await feed.subscribe(live, null)
  feed.durable(2, entryOf(1))
  await handedOut()
  t.same(live.got, [], 'entry 2 waits for entry 1')
  feed.durable(1, entryOf(2))
  feed.durable(3, entryOf(1))
  await handedOut()
  t.same(live.got, ['1.0', '1.1', '2.0', '3.0'])
  t.equal(feed.publishedSeq, 3)
})

t.test('durable entries are handed out after the answers of their turn, all of a turn in one round', async (t) => {
  const feed = new ChangeFeed('acme', fakeLog(new Map()), 0, () => state)
  const live = new Recorder()
  await feed.subscribe(live, null)
  // As the durability barrier tells it: in the promise reactions of a group commit's flush, which also answer the writes.
  const seenByAnswers: string[][] = []
  await Promise.resolve()
    .then(() => {
      feed.durable(1, entryOf(1))
      feed.durable(2, entryOf(1))
    })
    .then(() => seenByAnswers.push([...live.got]))
  t.same(seenByAnswers, [[]], 'nothing reached a subscriber before the answers')
  t.equal(feed.publishedSeq, 0, 'nor counts as handed out: a resume reads only what the live subscribers got')
  await handedOut()
  t.same(live.got, ['1.0', '2.0'])
  t.equal(feed.publishedSeq, 2)
})

t.test('a rewind takes back what was due and not handed out yet', async (t) => {
  const feed = new ChangeFeed('acme', fakeLog(new Map()), 0, () => state)
  const live = new Recorder()
  await feed.subscribe(live, null)
  feed.durable(1, entryOf(1))
  feed.durable(2, entryOf(1))
  feed.rewind(1)
  await handedOut()
  t.same(live.got, ['1.0'])
  t.equal(feed.publishedSeq, 1)
  feed.durable(2, entryOf(2))
  await handedOut()
  t.same(live.got, ['1.0', '2.0', '2.1'])
})

t.test('a resume reads the log, then goes live, with no gap and no duplicate', async (t) => {
  const logged = new Map<number, LogEntry>()
  const feed = new ChangeFeed('acme', fakeLog(logged), 0, () => state)
  const publish = (seq: number, count: number) => {
    logged.set(seq, entryOf(count))
    feed.durable(seq, logged.get(seq) as LogEntry)
  }
  for (let seq = 1; seq <= 600; seq += 1) publish(seq, 2)
  await handedOut()
  const resumed = new Recorder()
  const subscribed = feed.subscribe(resumed, { seq: 3, op: 0 })
  // Entries keep coming while the log is read.
  for (let seq = 601; seq <= 610; seq += 1) {
    await new Promise((resolve) => setImmediate(resolve))
    publish(seq, 2)
  }
  await subscribed
  publish(611, 1)
  await handedOut()
  const expected = ['3.1']
  for (let seq = 4; seq <= 610; seq += 1) expected.push(`${seq}.0`, `${seq}.1`)
  expected.push('611.0')
  t.same(resumed.got, expected)
})

t.test('a log that no longer holds what follows since ends the resume; a reset ends everyone', async (t) => {
  const logged = new Map<number, LogEntry>([
    [5, entryOf(1)],
    [6, entryOf(1)],
  ])
  const feed = new ChangeFeed('acme', fakeLog(logged), 6, () => state)
  t.equal(feed.resumeProblem({ seq: 2, op: null }), 'gone')
  t.equal(feed.resumeProblem({ seq: 7, op: null }), 'ahead')
  t.equal(feed.resumeProblem({ seq: 4, op: null }), null)
  const late = new Recorder()
  logged.delete(5)
  await feed.subscribe(late, { seq: 4, op: null })
  t.equal(late.endedWith, 'historyGone')
  const live = new Recorder()
  await feed.subscribe(live, null)
  feed.reset(2)
  t.equal(live.endedWith, 'historyRewritten')
  t.equal(feed.subscriberCount, 0)
})
