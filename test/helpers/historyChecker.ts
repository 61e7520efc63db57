/*
 * The checker of the randomized fault test (test/cluster/nemesis.test.ts):
 * it judges a recorded history of requests against what the log holds at
 * the end, and answers the anomalies, each naming its kind, the object and
 * the operations that show it. A pure function over plain data, so that a
 * hand-made history can show it catches each kind
 * (test/unit/helpers/historyChecker.test.ts).
 *
 * The model. Objects have versions; every write names what it puts: an
 * object, the version it gives it (a create 1, an update the version after
 * the one it names, which it needs to find) and a content no other write
 * uses, so that whatever is seen of an object later — by a read, or in the
 * log — names the one write that put it. A write's outcome is `ok`
 * (acknowledged), `failed` (refused with a 4xx, or never sent: applied
 * nowhere) or `unknown` (a 5xx, a timeout, a connection lost: it may have
 * been applied or not, at any time after it started, even after its client
 * gave up). A batch's transaction group is ONE write with several puts: all
 * of them or none. A read records what it saw of each object (null: absent)
 * at one moment: a GET, a batch of GETs, a list page; `scope` says that
 * every object under that prefix it does not name was absent then (a
 * complete list). The end is each object's chain: every version the log
 * holds, in order, with the content and the log entry that wrote it (the
 * change feed from the start of the log).
 *
 * The anomalies, what each would mean:
 *   lost-write            an acknowledged write's put is not in the log
 *   failed-write-applied  the log holds the put of a write that was refused
 *   version-gap           the log's versions of an object skip or repeat
 *   two-contents          one version of an object with two contents (the
 *                         log's and a read's or an acknowledgement's)
 *   unknown-value         a content no write put, or at another version
 *   dirty-read            a read saw a version the log never held: state
 *                         that was never durable, or was rolled back
 *   failed-write-seen     a read saw what a refused write put
 *   future-read           a read saw a write that started after it ended
 *   stale-read            a read saw an older version (or nothing) after a
 *                         newer one was acknowledged or seen by an
 *                         operation that ended before it began
 *   version-backwards     an acknowledged write gave a version older than
 *                         one acknowledged or seen before it began (it was
 *                         decided on stale state)
 *   half-applied-group    the log holds some puts of a group and not the
 *                         others, or holds them in different entries
 *   torn-read             one read saw some puts of a group and, for
 *                         others, an older version of their objects
 *   wrong-answer          an acknowledgement named another version than
 *                         the write put
 */

export type Outcome = 'ok' | 'failed' | 'unknown'

export interface Put {
  readonly object: string
  readonly version: number
  readonly content: string
}

export interface WriteOp {
  readonly kind: 'write'
  readonly id: number
  /** What it was, for the messages ("update via node2"). */
  readonly label: string
  readonly startMs: number
  /** When its answer came (or its client gave up). */
  readonly endMs: number
  readonly outcome: Outcome
  /** Everything the write puts; several for a transaction group, all or nothing. */
  readonly puts: readonly Put[]
  /** For an acknowledged write: the version the answer named for each put, in order. */
  readonly answered?: readonly number[]
  /** What its answer was, in short, for the messages ("409 TL01-1107", "no answer"). */
  readonly answer?: string
}

export interface Seen {
  readonly object: string
  /** null: the object was absent. */
  readonly value: { readonly version: number; readonly content: string } | null
}

export interface ReadOp {
  readonly kind: 'read'
  readonly id: number
  readonly label: string
  readonly startMs: number
  readonly endMs: number
  /** What the read saw, every object at one moment. */
  readonly saw: readonly Seen[]
  /** Every object whose name starts with this and that `saw` does not name was absent (a complete list). */
  readonly scope?: string
}

export type Operation = WriteOp | ReadOp

export interface LoggedVersion {
  readonly version: number
  readonly content: string
  /** The log entry that wrote it. */
  readonly seq: number
}

/** Every version of every object the log holds at the end, in log order. */
export type FinalChains = ReadonlyMap<string, readonly LoggedVersion[]>

export const ANOMALY_KINDS = [
  'lost-write',
  'failed-write-applied',
  'version-gap',
  'two-contents',
  'unknown-value',
  'dirty-read',
  'failed-write-seen',
  'future-read',
  'stale-read',
  'version-backwards',
  'half-applied-group',
  'torn-read',
  'wrong-answer',
] as const

export type AnomalyKind = (typeof ANOMALY_KINDS)[number]

interface Anomaly {
  readonly kind: AnomalyKind
  readonly object: string
  readonly message: string
  /** The operations that show it. */
  readonly ops: readonly number[]
}

export interface CheckResult {
  readonly anomalies: Anomaly[]
  readonly writes: Record<Outcome, number>
  readonly reads: number
  readonly objects: number
}

interface Source {
  readonly op: WriteOp
  readonly put: Put
}

/** Each content to the write and put that carry it; throws on a history whose writes share a content (a bad test). */
function sourcesOf(writes: readonly WriteOp[]): Map<string, Source> {
  const sources = new Map<string, Source>()
  for (const op of writes) {
    for (const put of op.puts) {
      if (sources.has(put.content)) throw new Error(`history: the content '${put.content}' is put twice (ops ${sources.get(put.content)?.op.id} and ${op.id})`)
      sources.set(put.content, { op, put })
    }
  }
  return sources
}

/** A read's view of each object, the objects of `scope` it does not name included as absent. */
function viewOf(read: ReadOp, objects: readonly string[]): Seen[] {
  if (read.scope === undefined) return [...read.saw]
  const named = new Set(read.saw.map((seen) => seen.object))
  const scope = read.scope
  return [...read.saw, ...objects.filter((object) => object.startsWith(scope) && !named.has(object)).map((object) => ({ object, value: null }))]
}

export function checkHistory(history: readonly Operation[], chains: FinalChains): CheckResult {
  const anomalies: Anomaly[] = []
  const report = (kind: AnomalyKind, object: string, message: string, ops: readonly number[]) => anomalies.push({ kind, object, message, ops })
  const writes = history.filter((op): op is WriteOp => op.kind === 'write')
  const reads = history.filter((op): op is ReadOp => op.kind === 'read')
  const sources = sourcesOf(writes)
  const objects = new Set<string>(chains.keys())
  for (const op of writes) for (const put of op.puts) objects.add(put.object)
  for (const op of reads) for (const seen of op.saw) objects.add(seen.object)
  const allObjects = [...objects]

  /** Per object, version → the content the log holds at it. */
  const logged = new Map<string, Map<number, LoggedVersion>>()
  for (const [object, chain] of chains) {
    const versions = new Map<number, LoggedVersion>()
    logged.set(object, versions)
    let expected = 1
    for (const entry of chain) {
      if (entry.version !== expected) report('version-gap', object, `the log holds version ${entry.version} where version ${expected} was due`, [])
      expected = entry.version + 1
      const before = versions.get(entry.version)
      if (before !== undefined && before.content !== entry.content) report('two-contents', object, `the log holds version ${entry.version} twice: '${before.content}' and '${entry.content}'`, [])
      versions.set(entry.version, entry)
      const source = sources.get(entry.content)
      if (source === undefined || source.put.object !== object || source.put.version !== entry.version) {
        report('unknown-value', object, `the log holds version ${entry.version} with '${entry.content}', which no write put there`, source === undefined ? [] : [source.op.id])
      } else if (source.op.outcome === 'failed') {
        report('failed-write-applied', object, `the log holds version ${entry.version} of ${source.op.label} (op ${source.op.id}), which was refused (${source.op.answer ?? 'refused'})`, [
          source.op.id,
        ])
      }
    }
  }
  const loggedAt = (put: Put): LoggedVersion | undefined => {
    const entry = logged.get(put.object)?.get(put.version)
    return entry?.content === put.content ? entry : undefined
  }

  // Acknowledged writes are in the log, whole; groups are whole or absent, in one entry.
  const counts: Record<Outcome, number> = { ok: 0, failed: 0, unknown: 0 }
  for (const op of writes) {
    counts[op.outcome] += 1
    if (op.outcome === 'ok') {
      op.puts.forEach((put, index) => {
        if (loggedAt(put) === undefined)
          report('lost-write', put.object, `${op.label} (op ${op.id}) was acknowledged with version ${put.version} ('${put.content}'), which the log does not hold`, [op.id])
        const answered = op.answered?.[index]
        if (answered !== undefined && answered !== put.version)
          report('wrong-answer', put.object, `${op.label} (op ${op.id}) was answered with version ${answered}, but puts version ${put.version}`, [op.id])
      })
    }
    if (op.puts.length > 1) {
      const entries = op.puts.map(loggedAt)
      const present = entries.filter((entry) => entry !== undefined)
      if (present.length > 0 && present.length < op.puts.length) {
        const missing = op.puts.filter((_, index) => entries[index] === undefined).map((put) => put.object)
        report('half-applied-group', missing[0] as string, `the log holds ${present.length} of the ${op.puts.length} puts of ${op.label} (op ${op.id}); missing: ${missing.join(', ')}`, [op.id])
      } else if (new Set(present.map((entry) => entry?.seq)).size > 1) {
        report(
          'half-applied-group',
          op.puts[0]?.object as string,
          `the puts of ${op.label} (op ${op.id}) are in different log entries (${[...new Set(present.map((entry) => entry?.seq))].join(', ')})`,
          [op.id],
        )
      }
    }
  }

  // What each read saw was put by a write that may have been applied, before the read ended, and is what the log holds.
  for (const read of reads) {
    for (const seen of read.saw) {
      if (seen.value === null) continue
      const { version, content } = seen.value
      const source = sources.get(content)
      if (source === undefined || source.put.object !== seen.object || source.put.version !== version) {
        report(
          'unknown-value',
          seen.object,
          `${read.label} (op ${read.id}) saw version ${version} with '${content}', which no write put there`,
          source === undefined ? [read.id] : [read.id, source.op.id],
        )
        continue
      }
      if (source.op.outcome === 'failed')
        report(
          'failed-write-seen',
          seen.object,
          `${read.label} (op ${read.id}) saw version ${version} of ${source.op.label} (op ${source.op.id}), which was refused (${source.op.answer ?? 'refused'})`,
          [read.id, source.op.id],
        )
      if (source.op.startMs > read.endMs)
        report('future-read', seen.object, `${read.label} (op ${read.id}) saw version ${version} of ${source.op.label} (op ${source.op.id}), which started after the read ended`, [
          read.id,
          source.op.id,
        ])
      const inLog = logged.get(seen.object)?.get(version)
      if (inLog === undefined)
        report(
          'dirty-read',
          seen.object,
          `${read.label} (op ${read.id}) saw version ${version} of ${source.op.label} (op ${source.op.id}, ${source.op.answer ?? source.op.outcome}), which the log never held`,
          [read.id, source.op.id],
        )
      else if (inLog.content !== content)
        report('two-contents', seen.object, `${read.label} (op ${read.id}) saw version ${version} as '${content}', the log holds '${inLog.content}'`, [read.id, source.op.id])
    }
  }

  // Real time: an operation that began after another ended never shows an older version of the same object.
  interface Sighting {
    readonly op: Operation
    readonly version: number
  }
  const sightings = new Map<string, Sighting[]>()
  const sight = (object: string, op: Operation, version: number) => {
    let list = sightings.get(object)
    if (list === undefined) {
      list = []
      sightings.set(object, list)
    }
    list.push({ op, version })
  }
  for (const op of writes) if (op.outcome === 'ok') for (const put of op.puts) sight(put.object, op, put.version)
  for (const read of reads) for (const seen of viewOf(read, allObjects)) sight(seen.object, read, seen.value?.version ?? 0)
  for (const [object, list] of sightings) {
    const byEnd = [...list].sort((a, b) => a.op.endMs - b.op.endMs)
    const byStart = [...list].sort((a, b) => a.op.startMs - b.op.startMs)
    let ended = 0
    let newest: Sighting | null = null
    for (const sighting of byStart) {
      while (ended < byEnd.length && (byEnd[ended] as Sighting).op.endMs < sighting.op.startMs) {
        const done = byEnd[ended] as Sighting
        if (newest === null || done.version > newest.version) newest = done
        ended += 1
      }
      if (newest === null || sighting.version >= newest.version) continue
      const what = `${newest.op.label} (op ${newest.op.id}) ${newest.op.kind === 'write' ? 'was acknowledged with' : 'saw'} version ${newest.version} before ${sighting.op.label} (op ${sighting.op.id}) began`
      if (sighting.op.kind === 'read') report('stale-read', object, `${what}, which then saw ${sighting.version === 0 ? 'no object' : `version ${sighting.version}`}`, [newest.op.id, sighting.op.id])
      else report('version-backwards', object, `${what}, which was then acknowledged with version ${sighting.version}`, [newest.op.id, sighting.op.id])
    }
  }

  // One read sees a group whole or not at all.
  const groups = writes.filter((op) => op.puts.length > 1)
  const groupsOf = new Map<string, WriteOp[]>()
  for (const op of groups) {
    for (const put of op.puts) {
      let list = groupsOf.get(put.object)
      if (list === undefined) {
        list = []
        groupsOf.set(put.object, list)
      }
      list.push(op)
    }
  }
  for (const read of reads) {
    const view = new Map(viewOf(read, allObjects).map((seen) => [seen.object, seen.value]))
    const candidates = new Set<WriteOp>()
    for (const object of view.keys()) for (const op of groupsOf.get(object) ?? []) candidates.add(op)
    for (const op of candidates) {
      const seenWhole: string[] = []
      const seenBefore: string[] = []
      for (const put of op.puts) {
        if (!view.has(put.object)) continue
        const value = view.get(put.object) ?? null
        if (value !== null && value.version === put.version && value.content === put.content) seenWhole.push(put.object)
        else if (value === null || value.version < put.version) seenBefore.push(put.object)
      }
      if (seenWhole.length > 0 && seenBefore.length > 0) {
        report('torn-read', seenBefore[0] as string, `${read.label} (op ${read.id}) saw ${op.label} (op ${op.id}) on ${seenWhole.join(', ')} but not on ${seenBefore.join(', ')}`, [read.id, op.id])
      }
    }
  }

  return { anomalies, writes: counts, reads: reads.length, objects: objects.size }
}
