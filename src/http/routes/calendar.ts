/*
 * The caller's calendar feed and its secret (the rules in
 * domain/calendarEvents.ts and domain/calendarSecrets.ts):
 *
 *   GET    users/@self/calendar.ics          the caller's time records of a window (`from`, `to`: yyyy-MM-dd) as
 *                                            iCalendar (icalendar.ts); signed in with a token as usual, or with
 *                                            `secret=<calendar secret>` instead, for calendar applications
 *   POST   users/@self/calendar/secret       makes the caller's calendar secret, replacing the one they had:
 *                                            201 {secret, url, webcal, path, createdAt}, the secret shown this once
 *   GET    users/@self/calendar/secret       {exists, createdAt}: whether the caller has one (never the secret)
 *   DELETE users/@self/calendar/secret       revokes it: the feed's URL stops working (404 when there is none)
 *
 * The feed's route is open in the route table (a calendar application
 * sends no token) and signs its caller in itself: a `secret` is looked up
 * by its hash among the calendar secrets alone — no other route reads that
 * parameter or that collection, so the secret opens this feed and nothing
 * else — and stands for its user while that user may sign in (401
 * TL01-1010 otherwise); without one the token is checked as on every call.
 * Either way the request counts against the user's rate limit. Fixed
 * routes, so they match before the users resource.
 */
import { calendarFeedSteps } from '../../domain/calendarEvents.js'
import { calendarSecretOf, calendarSecretUser, newCalendarSecret } from '../../domain/calendarSecrets.js'
import { ApiError } from '../../domain/errors.js'
import { makeCalendarSecret, removeCalendarSecret } from '../../domain/operations/calendarSecrets.js'
import { OutDate } from '../../domain/values.js'
import { andThen, type MaybePromise } from '../../maybePromise.js'
import { authenticate, principalFor } from '../authenticate.js'
import type { Call, Principal } from '../call.js'
import { icalendarText } from '../icalendar.js'
import { meterRequest } from '../rateLimiter.js'
import { withRateLimitHeaders } from '../rateLimitHeaders.js'
import { requireSession } from '../requireSession.js'
import { dataResponse, textResponse, type ApiResponse } from '../response.js'
import { publicUrl, tenantUrl } from './registration.js'

const FEED_PATH = '/users/@self/calendar.ics'
const XML_NAME = { root: 'calendarSecret' }

/** The caller of a feed request: by its calendar secret, else by its token (authenticate.ts). */
function feedCaller(call: Call): MaybePromise<Principal> {
  const secret = call.request.query.get('secret')
  if (secret === undefined) return authenticate(call)
  if (call.tenant === null) throw new ApiError('TL01-1005', 'this call needs a tenant address')
  return call.tenant.inspect((state) => {
    const user = calendarSecretUser(state, secret)
    if (user === null) throw new ApiError('TL01-1010', 'the calendar secret is invalid or was revoked: make a new one (POST users/@self/calendar/secret)')
    // No access token stands behind this caller: the feed is all it may read.
    return principalFor(state, user, '')
  })
}

export async function calendarFeed(call: Call): Promise<ApiResponse> {
  const nowMs = Date.now()
  const window = { from: call.request.query.get('from') ?? null, to: call.request.query.get('to') ?? null }
  return andThen(feedCaller(call), (principal) => {
    call.principal = principal
    const { tenant } = requireSession(call)
    return withRateLimitHeaders(meterRequest(call), () =>
      andThen(
        tenant.readInSlices((state) => calendarFeedSteps(state, principal, window, nowMs)),
        (feed) =>
          textResponse(call.request, icalendarText(feed, call.tenantName ?? ''), {
            'Content-Type': 'text/calendar; charset=utf-8',
            'Content-Disposition': 'inline; filename="timeledger.ics"',
            'Cache-Control': 'private, no-cache',
          }),
      ),
    )
  })
}

/** Where the feed of `secret` is: root-relative in the form of the request, absolute as the service names its addresses. */
function feedAddresses(call: Call, secret: string): { url: string; webcal: string; path: string } {
  const prefix = call.request.addressPrefix ?? ''
  const query = `?secret=${encodeURIComponent(secret)}`
  const path = `${prefix}/v1${FEED_PATH}${query}`
  const base = prefix === '' ? tenantUrl(call.services, call.tenantName ?? '') : `${publicUrl(call.services).replace(/\/v1$/, '')}${prefix}/v1`
  const url = `${base}${FEED_PATH}${query}`
  return { url, webcal: url.replace(/^https?:/, 'webcal:'), path }
}

export async function createCalendarSecret(call: Call): Promise<ApiResponse> {
  const { tenant, principal } = requireSession(call)
  // Random, so decided before the write; only its hash is stored and logged.
  const secret = newCalendarSecret()
  const rec = await tenant.write((tx) => makeCalendarSecret(tx, principal, secret))
  return dataResponse(call.request, { secret, ...feedAddresses(call, secret), createdAt: new OutDate(rec.createdAt) }, XML_NAME, 201)
}

export async function readCalendarSecret(call: Call): Promise<ApiResponse> {
  const { tenant, principal } = requireSession(call)
  return tenant.read((state) => {
    const rec = calendarSecretOf(state, principal.userId)
    return dataResponse(call.request, { exists: rec !== undefined, createdAt: rec === undefined ? null : new OutDate(rec.createdAt) }, XML_NAME)
  })
}

export async function deleteCalendarSecret(call: Call): Promise<ApiResponse> {
  const { tenant, principal } = requireSession(call)
  await tenant.write((tx) => removeCalendarSecret(tx, principal))
  return dataResponse(call.request, { deleted: true }, XML_NAME)
}
