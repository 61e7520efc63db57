/*
 * CalendarSecret (internal): the secret that opens one user's calendar feed
 * (`GET users/@self/calendar.ics?secret=…`) for a calendar application,
 * which cannot send a token. The id is the SHA-256 of the secret text, so
 * neither the log nor a snapshot holds a usable secret, and the feed finds
 * it by that hash; a user has at most one (making a new one replaces it).
 * It opens that feed and nothing else: no route but the feed looks here.
 */
import { declareResource, field } from '../declare.js'

export const CalendarSecret = declareResource({
  type: 'CalendarSecret',
  path: null,
  internal: true,
  description: 'the secret of a user’s calendar feed',
  displayName: () => 'calendar secret',
  fields: [field.ref('user', 'User', 'whose calendar it opens', { required: true })],
})
