/*
 * RenderedJson keeps rows from their second rendering and referenced
 * objects at once, as JSON text, until the state changes. When full
 * (1 MiB) it lets go of records of earlier answers as a clock does (a
 * record read since it was kept gets a second chance), so a page read
 * after other pages is kept again; it never lets
 * go of a record the answer being written used, so an answer larger than
 * the cache renders its overflow as objects instead of churning; a change
 * empties it.
 */
import t from 'tap'
import type { Rec } from '../../../src/domain/schema.js'
import { RenderedJson } from '../../../src/domain/renderedJson.js'
import { JsonFragment } from '../../../src/json/fragment.js'

const state = { changes: 0 }
/** A record whose row is about 10 KB of JSON. */
const record = (id: string): Rec => ({ id, version: 1, createdAt: 0, updatedAt: 0, trashItem: null, note: 'n'.repeat(10_000) })
const render = (rec: Rec) => () => ({ id: rec.id, note: rec.note })

/** One answer of `recs` as rows. */
function rows(cache: RenderedJson, recs: readonly Rec[]): unknown[] {
  cache.startAnswer()
  return recs.map((rec) => cache.row(rec, 'row', render(rec)))
}

/** One answer of `recs` as rows: how many came as kept text. */
function answer(cache: RenderedJson, recs: readonly Rec[]): number {
  return rows(cache, recs).filter((row) => row instanceof JsonFragment).length
}

const page = (name: string, count: number) => Array.from({ length: count }, (_, index) => record(`${name}${index}`))

t.test('rows are kept from their second rendering, and read from the text after', async (t) => {
  const cache = new RenderedJson(state)
  const recs = page('a', 10)
  t.equal(answer(cache, recs), 0, 'first: only marked as seen')
  t.equal(answer(cache, recs), 10, 'second: kept')
  const first = cache.row(recs[0] as Rec, 'row', render(recs[0] as Rec))
  t.equal(cache.row(recs[0] as Rec, 'row', render(recs[0] as Rec)), first, 'the same text object again')
})

t.test('a full cache lets go of the pages read least recently, so a new page is kept', async (t) => {
  const cache = new RenderedJson(state)
  const pages = [page('p', 40), page('q', 40), page('r', 40)]
  const firstText = new Map<string, unknown>()
  for (const recs of pages) {
    answer(cache, recs)
    const kept = rows(cache, recs)
    t.ok(
      kept.every((row) => row instanceof JsonFragment),
      'each page is kept when read twice (400 KB each)',
    )
    firstText.set((recs[0] as Rec).id, kept[0])
  }
  t.ok(cache.keptBytes <= 1024 * 1024, `within the limit (${cache.keptBytes} bytes)`)
  const latest = (pages[2] as Rec[])[0] as Rec
  t.equal(cache.row(latest, 'row', render(latest)), firstText.get(latest.id), 'the page read last is still kept: the same text')
  const oldest = (pages[0] as Rec[])[0] as Rec
  const again = cache.row(oldest, 'row', render(oldest))
  t.ok(again instanceof JsonFragment, 'the page read first is kept again (its rows were seen before)')
  t.ok(again !== firstText.get(oldest.id), 'as new text: its old text had been let go of')
})

t.test('a full cache gives a page read again since it was kept a second chance, and lets go of one that was not', async (t) => {
  const cache = new RenderedJson(state)
  const [p, q, r] = [page('p', 40), page('q', 40), page('r', 40)] as [Rec[], Rec[], Rec[]]
  const kept = (recs: Rec[]) => {
    answer(cache, recs)
    return rows(cache, recs)
  }
  const [pTexts, qTexts] = [kept(p), kept(q)]
  t.equal(answer(cache, p), 40, 'p is read again')
  t.equal(kept(r).filter((row) => row instanceof JsonFragment).length, 40, 'r is kept: 400 KB more than the cache has room for')
  cache.startAnswer()
  t.ok(
    p.every((rec, at) => cache.row(rec, 'row', render(rec)) === pTexts[at]),
    'p, read since it was kept, is still kept: the same texts',
  )
  t.ok(
    q.every((rec, at) => cache.row(rec, 'row', render(rec)) !== qTexts[at]),
    'q, not read since, was let go of',
  )
  t.ok(cache.keptBytes <= 1024 * 1024, `within the limit (${cache.keptBytes} bytes)`)
})

t.test('one answer larger than the cache keeps what fits and renders the rest as objects', async (t) => {
  const cache = new RenderedJson(state)
  const recs = page('big', 150)
  answer(cache, recs)
  const kept = answer(cache, recs)
  t.ok(kept > 80 && kept < 150, `about 1 MiB of the 1.5 MiB kept (${kept} rows)`)
  t.ok(cache.keptBytes <= 1024 * 1024)
  t.equal(answer(cache, recs.slice(0, kept)), kept, 'what was kept is still there: the answer did not let go of its own rows')
})

t.test('a change of the state empties the cache', async (t) => {
  const changing = { changes: 0 }
  const cache = new RenderedJson(changing)
  const recs = page('c', 5)
  answer(cache, recs)
  t.equal(answer(cache, recs), 5)
  changing.changes += 1
  t.equal(answer(cache, recs), 0, 'after a change, rows start over (seen once)')
  t.equal(cache.keptBytes, 0)
})
