/* SpendingTimeUnit (spendingtime): a span of a user's time; shown as its duration ("1h 20m"). */
import type { Rec } from '../schema.js'
import { declareResource, field, min } from '../declare.js'

const UNITS: readonly [string, number][] = [
  ['h', 3_600_000],
  ['m', 60_000],
  ['s', 1000],
]

/** "1h 20m", "20m", "45s"; "0m" for nothing. */
function durationText(ms: number): string {
  let rest = Math.max(0, Math.floor(ms))
  const parts: string[] = []
  for (const [unit, size] of UNITS) {
    const amount = Math.floor(rest / size)
    rest -= amount * size
    if (amount > 0) parts.push(`${amount}${unit}`)
  }
  return parts.length === 0 ? '0m' : parts.join(' ')
}

export const SpendingTimeUnit = declareResource({
  type: 'SpendingTimeUnit',
  path: 'spendingtime',
  writeRule: 'ownRecord',
  description: 'a span of time a user spent',
  displayName: (rec: Rec) => (typeof rec.duration === 'number' ? durationText(rec.duration) : ''),
  fields: [
    field.ref('user', 'User', 'whose time it is', { required: true }),
    field.date('begin', 'when the span began'),
    field.date('end', 'when the span ended'),
    field.long('duration', 'milliseconds', { constraints: [min(0)], inStub: true }),
  ],
})
