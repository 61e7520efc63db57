/*
 * The feed streams' byte queue (src/http/changes/byteQueue.ts): what an
 * event stream writes as one chunk (`takeUpTo`) is the front of the queue
 * in order, as many whole buffers as fit the cap (the first one whole
 * however long; a lone one itself, not a copy), and the bytes counted go
 * down by what was taken.
 */
import t from 'tap'
import { ByteQueue } from '../../../src/http/changes/byteQueue.js'

t.test('takeUpTo takes whole buffers from the front, in order, up to the cap', async (t) => {
  const queue = new ByteQueue()
  for (const text of ['aa', 'bbb', 'cccc', 'dd']) queue.push(Buffer.from(text))
  t.equal(queue.takeUpTo(6)?.toString(), 'aabbb', 'cccc would pass the cap')
  t.equal(queue.bytes, 6)
  t.equal(queue.takeUpTo(100)?.toString(), 'ccccdd')
  t.equal(queue.bytes, 0)
  t.equal(queue.takeUpTo(100), undefined)
  const long = Buffer.from('x'.repeat(10))
  queue.push(long)
  queue.push(Buffer.from('y'))
  t.equal(queue.takeUpTo(4), long, 'a first buffer past the cap goes whole, itself')
  t.equal(queue.length, 1)
})
