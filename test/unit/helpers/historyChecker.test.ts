/*
 * The fault test's checker (test/helpers/historyChecker.ts) on hand-made
 * histories: a history where everything holds gives no anomaly, the
 * indeterminate writes it must tolerate (present or not) give none, and
 * each kind of anomaly is caught by a history made to show exactly it.
 */
import t from 'tap'
import {
  ANOMALY_KINDS,
  checkHistory,
  type AnomalyKind,
  type FinalChains,
  type LoggedVersion,
  type Operation,
  type Outcome,
  type Put,
  type ReadOp,
  type Seen,
  type WriteOp,
} from '../../helpers/historyChecker.js'

let ids = 0
function write(startMs: number, endMs: number, outcome: Outcome, puts: Put[], answered?: number[]): WriteOp {
  ids += 1
  return { kind: 'write', id: ids, label: `write ${ids}`, startMs, endMs, outcome, puts, ...(answered === undefined ? {} : { answered }) }
}
function read(startMs: number, endMs: number, saw: Seen[], scope?: string): ReadOp {
  ids += 1
  return { kind: 'read', id: ids, label: `read ${ids}`, startMs, endMs, saw, ...(scope === undefined ? {} : { scope }) }
}
const put = (object: string, version: number, content: string): Put => ({ object, version, content })
const saw = (object: string, version: number, content: string): Seen => ({ object, value: { version, content } })
const absent = (object: string): Seen => ({ object, value: null })
function chains(entries: Record<string, [number, string, number][]>): FinalChains {
  return new Map(Object.entries(entries).map(([object, list]) => [object, list.map(([version, content, seq]): LoggedVersion => ({ version, content, seq }))]))
}
const kindsOf = (history: Operation[], final: FinalChains): AnomalyKind[] => [...new Set(checkHistory(history, final).anomalies.map((anomaly) => anomaly.kind))].sort()

/** A history where everything holds: creates, an update, a group, reads in real-time order, an indeterminate write. */
function cleanHistory(): { history: Operation[]; final: FinalChains } {
  const createA = write(0, 10, 'ok', [put('t/a', 1, 'a1')], [1])
  const updateA = write(20, 30, 'ok', [put('t/a', 2, 'a2')], [2])
  const conflict = write(21, 29, 'failed', [put('t/a', 2, 'a2-lost-race')])
  const group = write(40, 50, 'ok', [put('t/b', 1, 'b1'), put('t/c', 1, 'c1'), put('t/a', 3, 'a3')], [1, 1, 3])
  const maybe = write(60, 70, 'unknown', [put('t/d', 1, 'd1')])
  const history: Operation[] = [
    createA,
    read(11, 19, [saw('t/a', 1, 'a1')]),
    updateA,
    conflict,
    read(25, 35, [saw('t/a', 2, 'a2')]),
    group,
    read(45, 48, [saw('t/a', 2, 'a2'), absent('t/b'), absent('t/c')]),
    read(51, 55, [saw('t/a', 3, 'a3'), saw('t/b', 1, 'b1'), saw('t/c', 1, 'c1')], 't/'),
    maybe,
    read(65, 66, [saw('t/d', 1, 'd1')]),
    read(80, 90, [saw('t/a', 3, 'a3'), saw('t/b', 1, 'b1'), saw('t/c', 1, 'c1'), saw('t/d', 1, 'd1')], 't/'),
  ]
  const final = chains({
    't/a': [
      [1, 'a1', 1],
      [2, 'a2', 2],
      [3, 'a3', 3],
    ],
    't/b': [[1, 'b1', 3]],
    't/c': [[1, 'c1', 3]],
    't/d': [[1, 'd1', 4]],
  })
  return { history, final }
}

t.test('a history where everything holds has no anomaly', async (t) => {
  const { history, final } = cleanHistory()
  const result = checkHistory(history, final)
  t.same(result.anomalies, [])
  t.same(result.writes, { ok: 3, failed: 1, unknown: 1 })
  t.equal(result.reads, 6)
  t.equal(result.objects, 4)
})

t.test('an indeterminate write may be absent, and may have been applied after its client gave up', async (t) => {
  const notApplied = [write(0, 10, 'unknown', [put('t/a', 1, 'a1')]), read(20, 30, [absent('t/a')])]
  t.same(kindsOf(notApplied, chains({})), [], 'absent')
  const lateGroup = write(0, 10, 'unknown', [put('t/a', 1, 'a1'), put('t/b', 1, 'b1')])
  t.same(
    kindsOf([lateGroup, read(20, 30, [absent('t/a'), absent('t/b')]), read(40, 50, [saw('t/a', 1, 'a1'), saw('t/b', 1, 'b1')])], chains({ 't/a': [[1, 'a1', 7]], 't/b': [[1, 'b1', 7]] })),
    [],
    'applied after a read that did not see it',
  )
})

t.test('each kind of anomaly is caught', async (t) => {
  const cases: Record<AnomalyKind, () => { history: Operation[]; final: FinalChains }> = {
    'lost-write': () => ({ history: [write(0, 10, 'ok', [put('t/a', 1, 'a1')])], final: chains({}) }),
    'failed-write-applied': () => ({ history: [write(0, 10, 'failed', [put('t/a', 1, 'a1')])], final: chains({ 't/a': [[1, 'a1', 1]] }) }),
    'version-gap': () => ({
      history: [write(0, 10, 'ok', [put('t/a', 1, 'a1')]), write(20, 30, 'unknown', [put('t/a', 3, 'a3')])],
      final: chains({
        't/a': [
          [1, 'a1', 1],
          [3, 'a3', 2],
        ],
      }),
    }),
    'two-contents': () => ({
      history: [write(0, 10, 'ok', [put('t/a', 1, 'a1')]), write(20, 30, 'unknown', [put('t/a', 2, 'a2-x')]), write(20, 30, 'ok', [put('t/a', 2, 'a2-y')]), read(31, 32, [saw('t/a', 2, 'a2-x')])],
      final: chains({
        't/a': [
          [1, 'a1', 1],
          [2, 'a2-y', 2],
        ],
      }),
    }),
    'unknown-value': () => ({ history: [write(0, 10, 'ok', [put('t/a', 1, 'a1')]), read(20, 30, [saw('t/a', 1, 'never-written')])], final: chains({ 't/a': [[1, 'a1', 1]] }) }),
    'dirty-read': () => ({
      history: [write(0, 10, 'ok', [put('t/a', 1, 'a1')]), write(20, 30, 'unknown', [put('t/a', 2, 'a2')]), read(25, 35, [saw('t/a', 2, 'a2')])],
      final: chains({ 't/a': [[1, 'a1', 1]] }),
    }),
    'failed-write-seen': () => ({
      history: [
        write(0, 10, 'ok', [put('t/a', 1, 'a1')]),
        write(20, 30, 'failed', [put('t/a', 2, 'a2')]),
        read(25, 35, [saw('t/a', 1, 'a1')]),
        read(40, 50, [saw('t/a', 1, 'a1')]),
        read(26, 27, [saw('t/a', 2, 'a2')]),
      ],
      final: chains({ 't/a': [[1, 'a1', 1]] }),
    }),
    'future-read': () => ({
      history: [read(0, 10, [saw('t/a', 1, 'a1')]), write(20, 30, 'ok', [put('t/a', 1, 'a1')])],
      final: chains({ 't/a': [[1, 'a1', 1]] }),
    }),
    'stale-read': () => ({
      history: [write(0, 10, 'ok', [put('t/a', 1, 'a1')]), write(20, 30, 'ok', [put('t/a', 2, 'a2')]), read(40, 50, [saw('t/a', 1, 'a1')])],
      final: chains({
        't/a': [
          [1, 'a1', 1],
          [2, 'a2', 2],
        ],
      }),
    }),
    'version-backwards': () => ({
      history: [
        write(0, 10, 'ok', [put('t/a', 1, 'a1')]),
        read(15, 18, [saw('t/a', 3, 'a3')]),
        write(5, 12, 'ok', [put('t/a', 2, 'a2')]),
        write(9, 14, 'ok', [put('t/a', 3, 'a3')]),
        write(20, 30, 'ok', [put('t/a', 2, 'a2-again')]),
      ],
      final: chains({
        't/a': [
          [1, 'a1', 1],
          [2, 'a2', 2],
          [3, 'a3', 3],
        ],
      }),
    }),
    'half-applied-group': () => ({
      history: [write(0, 10, 'unknown', [put('t/a', 1, 'a1'), put('t/b', 1, 'b1')])],
      final: chains({ 't/a': [[1, 'a1', 1]] }),
    }),
    'torn-read': () => ({
      history: [write(0, 10, 'unknown', [put('t/a', 1, 'a1'), put('t/b', 1, 'b1')]), read(5, 8, [saw('t/a', 1, 'a1'), absent('t/b')])],
      final: chains({ 't/a': [[1, 'a1', 1]], 't/b': [[1, 'b1', 1]] }),
    }),
    'wrong-answer': () => ({ history: [write(0, 10, 'ok', [put('t/a', 1, 'a1')], [2])], final: chains({ 't/a': [[1, 'a1', 1]] }) }),
  }
  for (const kind of ANOMALY_KINDS) {
    const { history, final } = cases[kind]()
    const found = checkHistory(history, final).anomalies
    t.ok(
      found.some((anomaly) => anomaly.kind === kind),
      `${kind}: caught (${found.map((anomaly) => `${anomaly.kind}: ${anomaly.message}`).join('; ')})`,
    )
  }
})

t.test('the same anomalies in a longer clean history are caught there too', async (t) => {
  const { history, final } = cleanHistory()
  // A read after everything that misses the group's creates: stale, and torn against the group's update it saw.
  const late = read(100, 110, [saw('t/a', 3, 'a3')], 't/')
  t.same(kindsOf([...history, late], final), ['stale-read', 'torn-read'])
  // The log lost the group's second create: half-applied; the acknowledged group is lost; the reads saw what the log never held.
  const broken = new Map(final)
  broken.delete('t/c')
  t.same(kindsOf(history, broken), ['dirty-read', 'half-applied-group', 'lost-write'])
})

t.test('a history whose writes share a content is refused (a bad test, not an anomaly)', async (t) => {
  t.throws(() => checkHistory([write(0, 1, 'ok', [put('t/a', 1, 'same')]), write(0, 1, 'ok', [put('t/b', 1, 'same')])], chains({})), /put twice/)
})
