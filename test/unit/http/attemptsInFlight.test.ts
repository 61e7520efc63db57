/*
 * AttemptsInFlight (the login attempts being checked per key, and those
 * waiting for one to end): the end of an attempt wakes every waiter of its
 * key and no other; a wait ends by itself after its timeout; at most
 * MAX_WAITING attempts may wait per key; a key with nothing in flight or
 * waiting is forgotten.
 */
import t from 'tap'
import { AttemptsInFlight, MAX_WAITING } from '../../../src/http/attemptsInFlight.js'

t.test('an attempt that ends wakes the waiters of its key only', async (t) => {
  const attempts = new AttemptsInFlight()
  attempts.begin('a')
  attempts.begin('b')
  t.equal(attempts.count('a'), 1)
  const woken: string[] = []
  const waits = [attempts.nextEnd('a', 60_000).then(() => woken.push('a1')), attempts.nextEnd('a', 60_000).then(() => woken.push('a2')), attempts.nextEnd('b', 200).then(() => woken.push('b'))]
  attempts.end('a')
  await Promise.all(waits.slice(0, 2))
  t.same(woken.sort(), ['a1', 'a2'], 'both waiters of a, not the one of b')
  t.equal(attempts.count('a'), 0)
  await waits[2]
  t.same(woken.sort(), ['a1', 'a2', 'b'], 'the waiter of b ended with its timeout')
  t.equal(attempts.count('b'), 1, 'b is still in flight')
  attempts.end('b')
  attempts.end('b')
  t.equal(attempts.count('b'), 0, 'an end without an attempt in flight changes nothing')
})

t.test('at most MAX_WAITING attempts wait for one key', async (t) => {
  const attempts = new AttemptsInFlight()
  attempts.begin('k')
  const waits: Promise<void>[] = []
  for (let index = 0; index < MAX_WAITING; index += 1) {
    t.ok(attempts.canWait('k'))
    waits.push(attempts.nextEnd('k', 60_000))
  }
  t.notOk(attempts.canWait('k'), 'the next one may not wait')
  t.ok(attempts.canWait('other'), 'another key may')
  attempts.end('k')
  await Promise.all(waits)
  t.ok(attempts.canWait('k'), 'after the end nobody waits any more')
})

t.test('a wait that times out leaves no waiter behind', async (t) => {
  const attempts = new AttemptsInFlight()
  attempts.begin('k')
  for (let index = 0; index < MAX_WAITING; index += 1) await attempts.nextEnd('k', 1)
  t.ok(attempts.canWait('k'), 'every timed-out waiter is gone')
})
