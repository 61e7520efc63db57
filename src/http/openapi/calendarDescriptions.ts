/*
 * What the API description says of the calendar feed and its secret
 * (routes/calendar.ts). The feed takes the token like every call, or the
 * calendar secret in its `secret` parameter (the `calendarSecret` security
 * scheme, openApiDocument.ts), which opens this feed and nothing else.
 * Joined into the fixed routes' descriptions (fixedRouteDescriptions.ts).
 */
import { DEFAULT_DAYS_AFTER, DEFAULT_DAYS_BEFORE, MAX_CALENDAR_EVENTS, MAX_CALENDAR_WINDOW_DAYS } from '../../domain/calendarEvents.js'
import { CALENDAR_REFRESH_S } from '../icalendar.js'
import type { FixedRouteDescription } from './fixedRouteDescription.js'
import { closedObject, JSON_DATE, nullable } from './jsonSchema.js'
import { answers, dataAnswer, SIGNED_IN } from './operations.js'
import { parameterRef } from './parameters.js'

const FORMAT = [parameterRef('format'), parameterRef('suppress_response_code')]

const DAY = { type: 'string', format: 'date' }

const MADE = closedObject(
  {
    secret: { type: 'string', description: 'the calendar secret, shown this once' },
    url: { type: 'string', description: 'the feed’s URL with the secret, as the service names its addresses: give it to a calendar application' },
    webcal: { type: 'string', description: 'the same URL with the webcal: scheme, which calendar applications open as a subscription' },
    path: { type: 'string', description: 'the feed’s path with the secret, in the form of this request (resolve it against the address you called)' },
    createdAt: JSON_DATE,
  },
  'the new calendar secret and where the feed is',
)

const FEED_DESCRIPTION = [
  `The caller’s own time records whose start lies in the window, as iCalendar (RFC 5545) events in UTC: UID \`<record id>@timeledger\`, SEQUENCE the record’s version − 1, LAST-MODIFIED its updatedAt, the summary from project, task and description, the tags as categories. The window is from \`from\` to \`to\` (local days of the user’s time zone, both included; by default the last ${DEFAULT_DAYS_BEFORE} and the next ${DEFAULT_DAYS_AFTER} days), at most ${MAX_CALENDAR_WINDOW_DAYS} days and ${MAX_CALENDAR_EVENTS} events.`,
  `A calendar application sends no token: give it the URL that POST /users/@self/calendar/secret answers, which carries the calendar secret as \`secret\` (it opens this feed only). Applications are asked to refresh every ${CALENDAR_REFRESH_S / 60} minutes.`,
].join('\n\n')

export const CALENDAR_DESCRIPTIONS: readonly [string, FixedRouteDescription][] = [
  [
    'GET users/@self/calendar.ics',
    {
      summary: 'the caller’s time records as a calendar feed (iCalendar)',
      description: FEED_DESCRIPTION,
      tag: 'Calendar',
      security: [...SIGNED_IN, { calendarSecret: [] }],
      query: [
        { name: 'from', in: 'query', description: 'first day of the window (yyyy-MM-dd, the user’s time zone)', schema: DAY },
        { name: 'to', in: 'query', description: 'last day of the window (yyyy-MM-dd), included', schema: DAY },
      ],
      answers: answers({ '200': { description: 'the events', content: { 'text/calendar': { schema: { type: 'string' } } } } }),
    },
  ],
  [
    'POST users/@self/calendar/secret',
    {
      summary: 'make the caller’s calendar secret (replacing the one they had; shown once)',
      description: 'The answer holds the secret and the feed’s URL with it; the earlier secret, if any, stops working in the same write.',
      tag: 'Calendar',
      query: FORMAT,
      answers: answers({ '201': dataAnswer('the secret and the feed’s URL', MADE) }),
    },
  ],
  [
    'GET users/@self/calendar/secret',
    {
      summary: 'whether the caller has a calendar secret (never the secret itself)',
      tag: 'Calendar',
      query: FORMAT,
      answers: answers({ '200': dataAnswer('whether there is one, and since when', closedObject({ exists: { type: 'boolean' }, createdAt: nullable(JSON_DATE) })) }),
    },
  ],
  [
    'DELETE users/@self/calendar/secret',
    {
      summary: 'revoke the caller’s calendar secret: the feed’s URL stops working',
      tag: 'Calendar',
      query: FORMAT,
      answers: answers({ '200': dataAnswer('revoked', closedObject({ deleted: { type: 'boolean' } })) }),
    },
  ],
]
