/*
 * TextPool: equal texts come back equal, and the pool stays within its
 * bounds (no text over MAX_TEXT_CHARS, at most MAX_TEXTS texts) however
 * many unique texts a snapshot holds; the pooled copy (a string of its
 * own) is the text exactly, whatever its characters. Sharing itself (one
 * string object for equal texts) and the copy being no view into a longer
 * string are not observable from JavaScript; the memory figure and the
 * `count` scenario of the benchmark show them.
 */
import t from 'tap'
import { MAX_TEXT_CHARS, MAX_TEXTS, ownCopy, TextPool } from '../../../src/engine/textPool.js'

t.test('equal texts are pooled once', async (t) => {
  const pool = new TextPool()
  t.equal(pool.share('Support call'), 'Support call')
  t.equal(pool.share(['Support', 'call'].join(' ')), 'Support call')
  t.equal(pool.size, 1)
  t.equal(pool.share(''), '')
  t.equal(pool.size, 2)
})

t.test('long texts and texts beyond the bound are not kept', async (t) => {
  const pool = new TextPool()
  const long = 'x'.repeat(MAX_TEXT_CHARS + 1)
  t.equal(pool.share(long), long)
  t.equal(pool.size, 0, 'a text over the length bound is not pooled')
  for (let index = 0; index < MAX_TEXTS + 1000; index += 1) pool.share(`text ${index}`)
  t.equal(pool.size, MAX_TEXTS, 'the pool stops growing at its bound')
  t.equal(pool.share('text 70000'), 'text 70000', 'a text past the bound still comes back')
})

t.test('a pooled text is an exact copy, lone surrogates included', async (t) => {
  const pool = new TextPool()
  const longer = 'xx Support call, Café ☕, 😀, a lone \ud800 and \udc00 here xx'
  for (const text of ['Support call', 'Café ☕', '😀', 'a lone \ud800', '\udc00 alone', '', longer.slice(3, -3)]) {
    t.equal(ownCopy(text), text, `ownCopy(${JSON.stringify(text)})`)
    t.equal(pool.share(text), text, `share(${JSON.stringify(text)})`)
    t.equal(pool.share(text), text, `share(${JSON.stringify(text)}) again`)
  }
})
