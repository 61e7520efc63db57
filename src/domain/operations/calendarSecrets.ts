/*
 * The caller's calendar secret (calendarSecrets.ts has what it is): making
 * one for the text decided before the write — replacing the caller's
 * earlier one in the same write — and removing it.
 */
import type { Caller } from '../caller.js'
import { calendarSecretOf, revokeCalendarSecretsOf } from '../calendarSecrets.js'
import { secretId } from '../credentials.js'
import { ApiError } from '../errors.js'
import { putKeyedRecord } from '../recordMaking.js'
import { CalendarSecret } from '../resources/calendarSecret.js'
import type { Rec } from '../schema.js'
import type { Tx } from '../tx.js'

/** Stores the caller's secret for `text` (only its hash), removing the one they had. */
export function makeCalendarSecret(tx: Tx, caller: Caller, text: string): Rec {
  revokeCalendarSecretsOf(tx, caller.userId)
  return putKeyedRecord(tx, CalendarSecret, secretId(text), { user: caller.userId })
}

/** Removes the caller's secret: their feed's URL stops working. 404 when they have none. */
export function removeCalendarSecret(tx: Tx, caller: Caller): Rec {
  const rec = calendarSecretOf(tx.state, caller.userId)
  if (rec === undefined) throw new ApiError('TL01-1101', 'you have no calendar secret')
  revokeCalendarSecretsOf(tx, caller.userId)
  return rec
}
