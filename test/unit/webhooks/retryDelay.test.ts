/*
 * The webhooks' retry schedule (src/webhooks/retryDelay.ts): doubling from
 * the base, capped, with jitter of ±20 %, and never past the limit.
 */
import t from 'tap'
import { backoffMs, nextAttemptAt } from '../../../src/webhooks/retryDelay.js'

const policy = { baseMs: 1000, maxDelayMs: 3_600_000, limitMs: 86_400_000 }

t.test('exponential, capped', async (t) => {
  t.same(
    [1, 2, 3, 4, 5].map((attempts) => backoffMs(attempts, policy)),
    [1000, 2000, 4000, 8000, 16000],
  )
  t.equal(backoffMs(13, policy), 3_600_000)
  t.equal(backoffMs(500, policy), 3_600_000)
})

t.test('jitter and the limit', async (t) => {
  t.equal(
    nextAttemptAt(1, 0, 0, policy, () => 0),
    800,
  )
  t.equal(
    nextAttemptAt(1, 0, 0, policy, () => 1),
    1200,
  )
  t.equal(
    nextAttemptAt(20, 0, 86_000_000, policy, () => 0.5),
    86_400_000,
    'the last attempt is made at the limit',
  )
  t.equal(nextAttemptAt(21, 0, 86_400_000, policy), null, 'then the event is given up')
})
