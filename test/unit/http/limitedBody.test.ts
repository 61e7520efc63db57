/*
 * A body read up to a limit (src/http/limitedBody.ts), as both listeners
 * read theirs: a declared length over the limit is refused up front, the
 * chunks are refused the moment they pass it, and the body is its chunks
 * in order (one chunk: that chunk).
 */
import t from 'tap'
import { declaredBodyBytes, declaredOverLimit, LimitedBody } from '../../../src/http/limitedBody.js'

t.test('the declared length', async (t) => {
  t.equal(declaredBodyBytes(new Map()), 0, 'no Content-Length: no body declared')
  t.equal(declaredBodyBytes(new Map([['content-length', '12']])), 12)
  t.equal(declaredOverLimit(11, 10), true)
  t.equal(declaredOverLimit(10, 10), false, 'the limit itself is allowed')
  t.equal(declaredOverLimit(declaredBodyBytes(new Map([['content-length', 'x']])), 10), false, 'a length that is no number is left to the counting')
})

t.test('chunks up to the limit make the body, in order', async (t) => {
  const one = new LimitedBody(10)
  const chunk = Buffer.from('hello')
  t.equal(one.add(chunk), true)
  t.equal(one.bytes(), chunk, 'one chunk is the body itself')
  const three = new LimitedBody(10)
  for (const part of ['ab', 'cd', 'efghij']) t.equal(three.add(Buffer.from(part)), true)
  t.equal(three.bytes().toString(), 'abcdefghij', 'exactly the limit is allowed')
  t.equal(new LimitedBody(10).bytes().length, 0, 'no chunk: an empty body')
})

t.test('a body over the limit is refused and kept no more', async (t) => {
  const body = new LimitedBody(4)
  t.equal(body.add(Buffer.from('abc')), true)
  t.equal(body.add(Buffer.from('de')), false)
  t.equal(body.add(Buffer.from('f')), false, 'refused from then on')
  t.equal(body.bytes().length, 0)
})
