/*
 * Which export a request asks for (src/http/export/exportFormat.ts: the
 * format parameter, then the Accept header by quality) and the dates of an
 * export in a time zone (zonedDate.ts: offsets both ways, half hours, the
 * switch to summer time).
 */
import t from 'tap'
import { exportRequired, exportWanted } from '../../../src/http/export/exportFormat.js'
import { isoInZone } from '../../../src/http/export/zonedDate.js'

const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'
const head = (query: Record<string, string>, accept?: string) => ({ query: new Map(Object.entries(query)), headers: new Map(accept === undefined ? [] : [['accept', accept]]) })

t.test('the export an endpoint that offers them answers', async (t) => {
  t.equal(exportWanted(head({ format: 'csv' })), 'csv')
  t.equal(exportWanted(head({ format: 'xlsx' }, 'application/json')), 'xlsx', 'the parameter wins over Accept')
  t.equal(exportWanted(head({ format: 'json' }, 'text/csv')), null, 'format=json too')
  t.equal(exportWanted(head({}, 'text/csv')), 'csv')
  t.equal(exportWanted(head({}, `${XLSX}`)), 'xlsx')
  t.equal(exportWanted(head({}, 'TEXT/CSV; charset=utf-8')), 'csv', 'case and parameters')
  t.equal(exportWanted(head({}, 'text/csv;q=0.5, application/json')), null, 'a better JSON')
  t.equal(exportWanted(head({}, 'application/json;q=0.4, text/csv;q=0.9')), 'csv', 'a better CSV')
  t.equal(exportWanted(head({}, 'application/json, text/csv')), null, 'equal quality: the first written')
  t.equal(exportWanted(head({}, '*/*')), null)
  t.equal(exportWanted(head({}, 'text/csv;q=0')), null, 'quality 0 is refusal')
  t.equal(exportWanted(head({})), null)
})

t.test('the export a request insists on (406 where none is offered)', async (t) => {
  t.equal(exportRequired(head({ format: 'xlsx' })), 'xlsx')
  t.equal(exportRequired(head({}, 'text/csv')), 'csv')
  t.equal(exportRequired(head({}, 'text/csv, application/json;q=0.1')), null, 'JSON is acceptable too')
  t.equal(exportRequired(head({}, 'text/csv, */*;q=0.1')), null)
  t.equal(exportRequired(head({}, 'image/png')), null, 'an Accept of nothing known: the usual answer, as before')
  t.equal(exportRequired(head({ format: 'xml' }, 'text/csv')), null)
})

t.test('dates in a zone: ISO 8601 local time with the offset of that instant', async (t) => {
  t.equal(isoInZone(Date.parse('2024-07-01T06:30:00Z'), 'Europe/Berlin'), '2024-07-01T08:30:00+02:00')
  t.equal(isoInZone(Date.parse('2024-01-15T23:30:00Z'), 'Europe/Berlin'), '2024-01-16T00:30:00+01:00')
  t.equal(isoInZone(Date.parse('2024-03-31T00:59:59Z'), 'Europe/Berlin'), '2024-03-31T01:59:59+01:00', 'the second before summer time')
  t.equal(isoInZone(Date.parse('2024-03-31T01:00:00Z'), 'Europe/Berlin'), '2024-03-31T03:00:00+02:00', 'the first second of it')
  t.equal(isoInZone(Date.parse('2024-07-01T02:00:00Z'), 'America/New_York'), '2024-06-30T22:00:00-04:00')
  t.equal(isoInZone(Date.parse('2024-07-01T00:00:00.5Z'), 'Asia/Kolkata'), '2024-07-01T05:30:00.500+05:30')
  t.equal(isoInZone(Date.parse('2024-07-01T00:00:00Z'), 'UTC'), '2024-07-01T00:00:00Z')
  t.equal(isoInZone(Date.parse('2024-07-01T00:00:00Z'), 'Not/AZone'), '2024-07-01T00:00:00Z', 'a zone Intl does not know is UTC')
})
