/*
 * A calendar feed as iCalendar text (RFC 5545), written by ical-generator:
 * one VEVENT per time record (domain/calendarEvents.ts has what each holds).
 * Times are UTC (`…Z`), which every calendar application shows in its own
 * zone, so the feed needs no VTIMEZONE. What lets an application update an
 * event it already has: UID `<record id>@timeledger` (stable for the
 * record's life), SEQUENCE (the record's version − 1), LAST-MODIFIED and
 * DTSTAMP (its updatedAt). REFRESH-INTERVAL and X-PUBLISHED-TTL ask
 * subscribers to fetch again every CALENDAR_REFRESH_S seconds.
 */
import ical from 'ical-generator'
import type { CalendarFeed } from '../domain/calendarEvents.js'

export const CALENDAR_REFRESH_S = 15 * 60
const UID_DOMAIN = 'timeledger'

export function icalendarText(feed: CalendarFeed, tenant: string): string {
  const owner = feed.userName === '' ? 'my' : `${feed.userName}’s`
  const calendar = ical({
    name: `TimeLedger: ${owner} time records (${tenant})`,
    description: `Time records from ${feed.from} to ${feed.to} (${feed.timeZone})`,
    prodId: { company: 'TimeLedger', product: 'TimeLedger', language: 'EN' },
    ttl: CALENDAR_REFRESH_S,
  })
  for (const event of feed.events) {
    calendar.createEvent({
      id: `${event.id}@${UID_DOMAIN}`,
      sequence: event.version - 1,
      start: new Date(event.start),
      end: event.end === null ? null : new Date(event.end),
      stamp: new Date(event.updatedAt),
      created: new Date(event.createdAt),
      lastModified: new Date(event.updatedAt),
      summary: event.summary,
      description: event.description === '' ? null : event.description,
      categories: event.categories.map((name) => ({ name })),
    })
  }
  return calendar.toString()
}
