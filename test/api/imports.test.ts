/*
 * Moving in from other tools: `POST /v1/import/{source}` over HTTP against
 * a real server, with files laid out as Toggl Track, Clockify, Harvest and
 * Kimai write their detailed time report exports (test/fixtures/imports/:
 * their headers, date, time and duration forms, quoting, a decimal comma,
 * a semicolon delimiter), and the generic source with a column mapping.
 *
 * What is checked: the records as stored (start and stop in the account's
 * time zone, durations, billable flags, descriptions with commas, quotes
 * and line breaks, users by e-mail or by name), clients, projects, tasks
 * and tags made once and matched by name without regard to case; a dry run
 * stores nothing; malformed input (a broken quote, a wrong number of
 * fields, a bad date, time, duration or flag, an unknown column or user) is
 * a 4xx naming the line and column and stores nothing, also when the
 * refusal comes after objects were made; who may import what; another
 * user's personal project is never matched; the row and byte limits; one
 * write in the change feed; the tenant in the path.
 */
import fs from 'node:fs'
import t from 'tap'
import { openEventSourceFeed } from '../helpers/changeFeed.js'
import { dateMs, expectError } from '../helpers/identity.js'
import { inClusterParitySuite } from '../helpers/paritySuite.js'
import { activeActor, startInProcess } from '../helpers/server.js'
import { addUser, type TestUser } from '../helpers/users.js'
import type { AnswerJson, TestResponse } from '../helpers/http.js'

const MAX_IMPORT_BYTES = 3 * 1024 * 1024
const MAX_IMPORT_ROWS = 2000

inClusterParitySuite()

const server = await startInProcess(undefined, { MAX_IMPORT_BYTES: String(MAX_IMPORT_BYTES), MAX_IMPORT_ROWS: String(MAX_IMPORT_ROWS) })
t.teardown(() => server.stop())
const { client } = server

const fixture = (name: string) => fs.readFileSync(new URL(`../fixtures/imports/${name}`, import.meta.url))
const berlin = (year: number, month: number, day: number, hour: number, minute = 0, second = 0, offsetHours = 1) => Date.UTC(year, month - 1, day, hour - offsetHours, minute, second)

interface Tenant {
  name: string
  token: string
  ownerId: string
  bob: TestUser
  pam: TestUser
}

let tenants = 0
/** A tenant of its own: owner Ada Lovelace (ada@<tenant>.test), Bob Tester, Pam Tester (project manager), Europe/Berlin. */
async function freshTenant(): Promise<Tenant> {
  tenants += 1
  const name = `acme${tenants}`
  const { token } = await client.createTenant(name, `ada@${name}.test`)
  const self = await client.request('GET', '/v1/users/@self', { tenant: name, query: { token } })
  await client.request('PUT', '/v1/users/@self', { tenant: name, query: { token, version_ignore: true }, body: { firstName: 'Ada', lastName: 'Lovelace' } })
  const account = await client.request('PUT', '/v1/accounts/@own', { tenant: name, query: { token, version_ignore: true }, body: { timeZone: 'Europe/Berlin' } })
  if (account.status !== 200) throw new Error(`account: ${account.status} ${account.text}`)
  const bob = await addUser(server, name, token, 'Bob')
  const pam = await addUser(server, name, token, 'Pam', { projectManager: true })
  return { name, token, ownerId: self.json.id as string, bob, pam }
}

/** The fixture's text with the tenant's e-mail domain. */
function forTenant(file: Buffer | string, tenant: Tenant): string {
  return file.toString().replaceAll('@acme.test', `@${tenant.name}.test`)
}

function importFile(
  tenant: Tenant,
  source: string,
  body: string | Buffer,
  query: Record<string, string | number | boolean> = {},
  token = tenant.token,
  contentType = 'text/csv',
): Promise<TestResponse> {
  return client.request('POST', `/v1/import/${source}`, { tenant: tenant.name, query: { token, ...query }, rawBody: body, headers: { 'content-type': contentType } })
}

async function list(tenant: Tenant, path: string, query: Record<string, string> = {}): Promise<AnswerJson[]> {
  const answer = await client.request('GET', `/v1/${path}`, { tenant: tenant.name, query: { token: tenant.token, $top: '1000', ...query } })
  if (answer.status !== 200) throw new Error(`GET ${path}: ${answer.status} ${answer.text}`)
  return answer.json as AnswerJson[]
}

const records = (tenant: Tenant) => list(tenant, 'time/timerecords', { $orderby: 'start' })
const names = (objects: AnswerJson[]) => objects.map((object) => object.name).sort()
const seqOf = (tenant: Tenant) => (activeActor(server, tenant.name) as { state: { seq: number } }).state.seq

t.test('a Toggl Track detailed report: records in the account’s time zone, names made once and matched without case, quoting', async (t) => {
  const acme = await freshTenant()
  const globex = await client.request('POST', '/v1/time/clients', { tenant: acme.name, query: { token: acme.token }, body: { name: 'globex' } })
  await client.request('POST', '/v1/time/tags', { tenant: acme.name, query: { token: acme.token }, body: { name: 'DESIGN' } })
  const answer = await importFile(acme, 'toggl', forTenant(fixture('toggl-detailed.csv'), acme))
  t.equal(answer.status, 201, answer.text)
  t.match(answer.json, {
    source: 'toggl',
    dryRun: false,
    rows: 4,
    timeZone: 'Europe/Berlin',
    created: { clients: 0, projects: 2, tasks: 1, tags: 1, timeRecords: 4 },
    matched: { clients: 1, projects: 0, tasks: 0, tags: 1 },
    users: 2,
    assignedToCaller: 0,
    ignoredColumns: ['User', 'Amount (USD)'],
    preview: [],
  })
  t.same(names(await list(acme, 'time/clients')), ['globex'], 'Globex is the existing globex')
  t.same(names(await list(acme, 'time/projects')), ['Internal', 'Website'], 'each project made once')
  t.same(names(await list(acme, 'time/tags')), ['DESIGN', 'web'], 'Web and web are one tag; design is DESIGN')
  const [tasks] = [await list(acme, 'time/tasks')]
  t.same(names(tasks), ['Design'])
  const stored = await records(acme)
  t.equal(stored.length, 4)
  const [first, second, third, fourth] = stored
  t.equal(first.user.id, acme.ownerId, 'ada@ is the owner')
  t.equal(dateMs(first.start), berlin(2025, 3, 3, 9), '09:00 in Berlin (UTC+1)')
  t.equal(dateMs(first.stop), berlin(2025, 3, 3, 10, 30))
  t.equal(first.duration, 5_400_000)
  t.equal(first.billable, true)
  t.equal(first.description, 'Header, footer and the "hero" image', 'a quoted field with a comma and doubled quotes')
  t.equal(first.project.name, 'Website')
  t.equal(first.client.id, globex.json.id)
  t.equal(first.task.name, 'Design')
  t.same(first.tags.map((tag: AnswerJson) => tag.name).sort(), ['DESIGN', 'web'])
  t.equal(second.description, 'Call with the client\nabout the launch', 'a quoted line break is kept (as \\n)')
  t.equal(second.billable, false)
  t.equal(second.duration, 1_830_000, '00:30:30')
  t.equal(second.task, null)
  t.equal(third.user.id, acme.bob.id, 'bob@ is Bob')
  t.equal(third.client, null)
  t.equal(third.project.name, 'Internal')
  t.equal(dateMs(fourth.start), Date.UTC(2025, 2, 30, 0, 30), '01:30 before the clocks moved (UTC+1)')
  t.equal(dateMs(fourth.stop), Date.UTC(2025, 2, 30, 1, 30), '03:30 after (UTC+2)')
  t.equal(fourth.duration, 3_600_000, 'one real hour')
})

t.test('Clockify: US dates, 12-hour times, every field quoted, a record past midnight', async (t) => {
  const acme = await freshTenant()
  const answer = await importFile(acme, 'clockify', forTenant(fixture('clockify-detailed.csv'), acme))
  t.equal(answer.status, 201, answer.text)
  t.match(answer.json, {
    rows: 3,
    created: { clients: 1, projects: 2, tasks: 1, tags: 3, timeRecords: 3 },
    ignoredColumns: ['User', 'Group', 'Duration (decimal)', 'Billable Rate (USD)', 'Billable Amount (USD)'],
  })
  const [wireframes, standup, hotfix] = await records(acme)
  t.equal(dateMs(wireframes.start), berlin(2025, 3, 5, 9, 15), '03/05/2025 09:15:00 AM is March 5')
  t.equal(dateMs(wireframes.stop), berlin(2025, 3, 5, 12), '12:00:00 PM is noon')
  t.equal(wireframes.description, 'Wireframes, first draft')
  t.equal(standup.user.id, acme.bob.id)
  t.equal(standup.billable, false)
  t.equal(hotfix.description, 'Late fix "hotfix"')
  t.equal(dateMs(hotfix.start), berlin(2025, 3, 6, 23))
  t.equal(dateMs(hotfix.stop), berlin(2025, 3, 7, 1), '01:00:00 AM of the next day')
  t.equal(hotfix.duration, 7_200_000)
  t.same(hotfix.tags.map((tag: AnswerJson) => tag.name).sort(), ['urgent', 'web'])
})

t.test('Harvest: users by first and last name, hours with a decimal comma, days without times', async (t) => {
  const acme = await freshTenant()
  const answer = await importFile(acme, 'harvest', forTenant(fixture('harvest-detailed-time.csv'), acme))
  t.equal(answer.status, 201, answer.text)
  t.match(answer.json, { rows: 2, created: { clients: 2, projects: 2, tasks: 2, tags: 0, timeRecords: 2 }, users: 2 })
  t.ok(answer.json.ignoredColumns.includes('Billable Rate') && answer.json.ignoredColumns.includes('Invoiced?'))
  const [landing, migration] = await records(acme)
  t.equal(landing.user.id, acme.ownerId, 'Ada Lovelace by name')
  t.equal(dateMs(landing.start), berlin(2025, 3, 10, 0), 'the day starts at local midnight')
  t.equal(landing.duration, 12_600_000, '3.5 hours')
  t.equal(dateMs(landing.stop), berlin(2025, 3, 10, 3, 30))
  t.equal(landing.description, 'Landing page, mobile')
  t.equal(landing.billable, true)
  t.equal(migration.user.id, acme.bob.id, 'Bob Tester by name')
  t.equal(migration.duration, 26_100_000, '"7,25" hours')
  t.equal(migration.description, null, 'empty notes')
  t.equal(migration.task.name, 'Development')
  await addUser(server, acme.name, acme.token, 'Robert', { firstName: 'Bob', email: `robert@${acme.name}.test` })
  const ambiguous = await importFile(acme, 'harvest', forTenant(fixture('harvest-detailed-time.csv'), acme), { dry_run: true })
  expectError(t, ambiguous, 400, 'TL01-1105', 'two users named Bob Tester')
  t.match(ambiguous.json.message, /^line 3, column 'First Name': 2 users are named 'Bob Tester'/)
})

t.test('Kimai: semicolons, an activity is a task, a record past midnight written with one date', async (t) => {
  const acme = await freshTenant()
  const answer = await importFile(acme, 'kimai', forTenant(fixture('kimai-export.csv'), acme))
  t.equal(answer.status, 201, answer.text)
  t.match(answer.json, { rows: 2, created: { clients: 2, projects: 2, tasks: 2, tags: 3, timeRecords: 2 } })
  const [checkout, night] = await records(acme)
  t.equal(dateMs(checkout.start), berlin(2025, 3, 12, 8))
  t.equal(checkout.duration, 16_200_000, 'From and To give the duration')
  t.equal(checkout.billable, true, '1 is billable')
  t.equal(checkout.task.name, 'Development')
  t.equal(checkout.client.name, 'Globex', 'the customer')
  t.equal(night.description, 'Night shift; database', 'a quoted delimiter')
  t.equal(dateMs(night.start), berlin(2025, 3, 12, 22, 30))
  t.equal(dateMs(night.stop), berlin(2025, 3, 13, 1, 15), 'To before From: the next day')
  t.equal(night.billable, false, 'empty is not billable')
})

t.test('generic: columns named in the query, date-times with an offset, minutes', async (t) => {
  const acme = await freshTenant()
  const file = [
    'Wann;Bis;Minuten;Wer;Projekt;Notiz',
    `2025-06-02T09:00:00+02:00;;90;ADA@${acme.name.toUpperCase()}.TEST;Apollo;Kick-off`,
    `2025-06-02 14:00;2025-06-02 15:15;;bob@${acme.name}.test;apollo;`,
  ].join('\n')
  const query = { 'map.start': 'Wann', 'map.end': 'Bis', 'map.duration': 'Minuten', 'map.email': 'Wer', 'map.project': 'Projekt', 'map.description': 'Notiz', duration_unit: 'minutes' }
  const answer = await importFile(acme, 'generic', file, query)
  t.equal(answer.status, 201, answer.text)
  t.match(answer.json, { rows: 2, created: { projects: 1, timeRecords: 2 }, ignoredColumns: [] })
  const [kickoff, later] = await records(acme)
  t.equal(kickoff.user.id, acme.ownerId, 'e-mails without regard to case')
  t.equal(dateMs(kickoff.start), Date.UTC(2025, 5, 2, 7), 'the offset names the instant')
  t.equal(kickoff.duration, 5_400_000, '90 minutes')
  t.equal(dateMs(later.start), Date.UTC(2025, 5, 2, 12), 'local 14:00 in summer (UTC+2)')
  t.equal(later.duration, 4_500_000)
  t.equal(later.project.id, kickoff.project.id, 'apollo is Apollo')
  const noColumn = await importFile(acme, 'generic', file, { 'map.start': 'Wann', 'map.email': 'Wer' })
  expectError(t, noColumn, 400, 'TL01-1105', 'no end, end time or duration named')
  t.match(noColumn.json.message, /no column for endTime or end or duration/)
})

t.test('a dry run answers what would be made and the first rows as read, and stores nothing', async (t) => {
  const acme = await freshTenant()
  const before = seqOf(acme)
  const answer = await importFile(acme, 'toggl', forTenant(fixture('toggl-detailed.csv'), acme), { dry_run: true, preview: 2 })
  t.equal(answer.status, 200, answer.text)
  t.match(answer.json, { dryRun: true, rows: 4, created: { clients: 1, projects: 2, tasks: 1, tags: 2, timeRecords: 4 } })
  t.equal(answer.json.preview.length, 2)
  t.same(answer.json.preview[0], {
    line: 2,
    user: { id: acme.ownerId, email: `ada@${acme.name}.test` },
    assignedToCaller: false,
    client: { name: 'Globex', id: null, existing: false },
    project: { name: 'Website', id: null, existing: false },
    task: { name: 'Design', id: null, existing: false },
    tags: [
      { name: 'design', id: null, existing: false },
      { name: 'web', id: null, existing: false },
    ],
    start: '2025-03-03T09:00:00+01:00',
    stop: '2025-03-03T10:30:00+01:00',
    duration: 5_400_000,
    billable: true,
    description: 'Header, footer and the "hero" image',
  })
  t.equal(answer.json.preview[1].line, 3, 'the line a record spanning two lines starts on')
  t.equal(seqOf(acme), before, 'nothing logged')
  t.same(await records(acme), [])
  t.same(await list(acme, 'time/clients'), [])
  t.same(await list(acme, 'time/tags'), [])
  const real = await importFile(acme, 'toggl', forTenant(fixture('toggl-detailed.csv'), acme))
  t.same(real.json.created, answer.json.created, 'the import then makes what the dry run said')
  t.equal(seqOf(acme), before + 1, 'in one log entry')
})

t.test('bad input is refused naming the line and column, and nothing is stored', async (t) => {
  const acme = await freshTenant()
  const before = seqOf(acme)
  const header = 'User,Email,Client,Project,Task,Description,Billable,Start date,Start time,End date,End time,Duration,Tags'
  const good = `Ada,ada@${acme.name}.test,Globex,Website,,ok,Yes,2025-03-03,09:00:00,2025-03-03,10:00:00,01:00:00,`
  const refused = async (label: string, body: string | Buffer, status: number, code: string, message: RegExp, query: Record<string, string> = {}, contentType = 'text/csv') => {
    const answer = await importFile(acme, 'toggl', body, query, acme.token, contentType)
    expectError(t, answer, status, code, label)
    t.match(answer.json?.message, message, `${label}: ${answer.json?.message}`)
  }
  await refused(
    'a quote not closed',
    [header, good, 'Ada,x@y,,,,"never closed,Yes,2025-03-03,09:00:00,,,01:00:00,'].join('\n'),
    400,
    'TL01-1105',
    /^line 3, column 'Description': a quoted field is not closed/,
  )
  await refused('a field too many', [header, good, good, `${good},extra`].join('\r\n'), 400, 'TL01-1105', /^line 4: .*the header has 13 columns/)
  await refused(
    'a quote in an unquoted field',
    [header, good, `Ada,ada@${acme.name}.test,,,,say "hi",Yes,2025-03-03,09:00:00,,,01:00:00,`].join('\n'),
    400,
    'TL01-1105',
    /^line 3(, column 'Description')?: .*quote/,
  )
  await refused('a bad date', [header, good, good.replace('2025-03-03,09', '2025-02-30,09')].join('\n'), 400, 'TL01-1105', /^line 3, column 'Start date': '2025-02-30' is no date of the calendar/)
  await refused('a bad time', [header, good.replace('09:00:00', '25:00:00')].join('\n'), 400, 'TL01-1105', /^line 2, column 'Start time': '25:00:00'/)
  await refused('a bad duration', [header, good.replace(',2025-03-03,10:00:00,01:00:00,', ',,,1h30,')].join('\n'), 400, 'TL01-1105', /^line 2, column 'Duration': '1h30' is not a duration/)
  await refused('a bad flag', [header, good.replace(',Yes,', ',Maybe,')].join('\n'), 400, 'TL01-1105', /^line 2, column 'Billable': 'Maybe' is neither yes nor no/)
  await refused('an end before the start', [header, good.replace('10:00:00', '08:00:00')].join('\n'), 400, 'TL01-1105', /^line 2, column 'End time': the record ends before it starts/)
  await refused('an empty start date', [header, good.replace('2025-03-03,09', ',09')].join('\n'), 400, 'TL01-1105', /^line 2, column 'Start date': is empty/)
  await refused('a missing column', 'Email,Start date,Duration\nada@x.test,2025-03-03,1:00', 400, 'TL01-1105', /no column for startTime: a toggl import needs 'Start time'/)
  await refused('a mapping to no column', [header, good].join('\n'), 400, 'TL01-1105', /^map\.task: the file has no column 'Aufgabe'/, { 'map.task': 'Aufgabe' })
  await refused('a mapping of no field', [header, good].join('\n'), 400, 'TL01-1105', /^map\.colour: no such field/, { 'map.colour': 'Tags' })
  await refused(
    'an unknown user',
    [header, good, good.replace(`ada@${acme.name}.test`, 'nobody@elsewhere.test')].join('\n'),
    400,
    'TL01-1105',
    /^line 3, column 'Email': no user 'nobody@elsewhere\.test' in this account \(unknown_users=self/,
  )
  await refused('an empty file', '', 400, 'TL01-1105', /the file is empty/)
  await refused('a header only', `${header}\n`, 400, 'TL01-1105', /no rows/)
  await refused('UTF-16', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(`${header}\n${good}`, 'utf16le')]), 400, 'TL01-1105', /UTF-16/)
  await refused('Latin-1', Buffer.from(`${header}\n${good.replace('ok', 'Caf\u00e9')}`, 'latin1'), 400, 'TL01-1105', /not UTF-8/)
  await refused('not CSV', [header, good].join('\n'), 415, 'TL01-9005', /CSV file/, {}, 'application/json')
  await refused('another charset', [header, good].join('\n'), 415, 'TL01-9005', /UTF-8/, {}, 'text/csv; charset=windows-1252')
  await refused('a bad option', [header, good].join('\n'), 400, 'TL01-1105', /unknown_users must be one of refuse, self/, { unknown_users: 'guess' })
  await refused('a bad time zone', [header, good].join('\n'), 400, 'TL01-1105', /time_zone must be an IANA time zone/, { time_zone: 'Mars/Olympus' })
  const unknownSource = await importFile(acme, 'excel', [header, good].join('\n'))
  expectError(t, unknownSource, 404, 'TL01-9003', 'an unknown source')
  // A refusal after the import made objects: a tag too long for its constraint, on line 3.
  await refused('a refusal while writing', [header, good, good.replace(/,$/, `,${'x'.repeat(101)}`)].join('\n'), 412, 'TL01-1104', /^line 3, making tag 'x{10}/)
  t.equal(seqOf(acme), before, 'nothing logged')
  t.same(await list(acme, 'time/clients'), [], 'Globex of line 2 was not kept')
  t.same(await list(acme, 'time/projects'), [])
  t.same(await records(acme), [])
})

t.test('rows of unknown users: refused with their line, or the caller’s with unknown_users=self', async (t) => {
  const acme = await freshTenant()
  const file = `Email,Start date,Start time,Duration\nada@${acme.name}.test,2025-03-03,09:00,1:00\nformer@elsewhere.test,2025-03-03,10:00,0:30\n,2025-03-03,11:00,0:15\n`
  const refused = await importFile(acme, 'toggl', file)
  expectError(t, refused, 400, 'TL01-1105')
  t.match(refused.json.message, /^line 3, column 'Email': no user 'former@elsewhere.test'/)
  const answer = await importFile(acme, 'toggl', file, { unknown_users: 'self' }, acme.bob.token)
  t.equal(answer.status, 403, 'Bob may not write Ada’s row')
  t.match(answer.json.message, /^line 2, making its time record: /)
  const owned = await importFile(acme, 'toggl', file, { unknown_users: 'self' })
  t.equal(owned.status, 201, owned.text)
  t.match(owned.json, { rows: 3, assignedToCaller: 2, users: 1 })
  t.ok((await records(acme)).every((record) => record.user.id === acme.ownerId))
  const noEmailColumn = await importFile(acme, 'toggl', 'Start date,Start time,Duration\n2025-03-04,09:00,1:00\n', { unknown_users: 'self' }, acme.bob.token)
  t.equal(noEmailColumn.status, 201, 'with unknown_users=self the user column may be missing')
  t.equal(noEmailColumn.json.assignedToCaller, 1)
})

t.test('who may import what: each object under the rules of its POST', async (t) => {
  const acme = await freshTenant()
  const row = (email: string, client: string, project: string, tags = '') => `${email},${client},${project},2025-03-03,09:00,1:00,${tags}`
  const header = 'Email,Client,Project,Start date,Start time,Duration,Tags'
  const bob = `bob@${acme.name}.test`
  const othersRow = await importFile(acme, 'toggl', [header, row(bob, '', 'Own'), row(`ada@${acme.name}.test`, '', 'Own')].join('\n'), {}, acme.bob.token)
  expectError(t, othersRow, 403, 'TL01-1008', 'a plain user importing another user’s row')
  t.match(othersRow.json.message, /^line 3, making its time record: /)
  const newClient = await importFile(acme, 'toggl', [header, row(bob, 'Initech', 'Own')].join('\n'), {}, acme.bob.token)
  expectError(t, newClient, 403, 'TL01-1008', 'a plain user making a client')
  t.match(newClient.json.message, /^line 2, making client 'Initech': /)
  const newTag = await importFile(acme, 'toggl', [header, row(bob, '', 'Own', 'urgent')].join('\n'), {}, acme.bob.token)
  expectError(t, newTag, 403, 'TL01-1008', 'a plain user making a tag')
  t.same(await list(acme, 'time/projects'), [], 'nothing of the refused imports is kept')
  const own = await importFile(acme, 'toggl', [header, row(bob, '', 'Own')].join('\n'), {}, acme.bob.token)
  t.equal(own.status, 201, `own rows on a new project: ${own.text}`)
  const [project] = await list(acme, 'time/projects')
  t.equal(project.owner.id, acme.bob.id, 'the project is the importing user’s')
  const pamsRows = await importFile(acme, 'toggl', [header, row(bob, 'Initech', 'Managed', 'urgent'), row(`pam@${acme.name}.test`, 'Initech', 'Managed')].join('\n'), {}, acme.pam.token)
  t.equal(pamsRows.status, 201, `a project manager: other users’ rows on a project of hers: ${pamsRows.text}`)
  const onBobsProject = await importFile(acme, 'toggl', [header, row(bob, '', 'Own')].join('\n'), {}, acme.pam.token)
  t.equal(onBobsProject.status, 403, 'but not on Bob’s project')
  // A locked period holds for imports as for every write, except for the owner and admins.
  await client.request('POST', '/v1/time/locks', { tenant: acme.name, query: { token: acme.token }, body: { lockDate: '2025-04-01T00:00:00Z' } })
  const locked = await importFile(acme, 'toggl', [header, row(bob, '', 'Own')].join('\n'), {}, acme.bob.token)
  expectError(t, locked, 412, 'TL01-1106', 'before the lock date')
  t.match(locked.json.message, /^line 2, making its time record: /)
  const byOwner = await importFile(acme, 'toggl', [header, row(bob, '', 'Own')].join('\n'))
  t.equal(byOwner.status, 201, 'the owner imports into a locked period')
})

t.test('another user’s personal project is never matched, nor shown', async (t) => {
  const acme = await freshTenant()
  const secret = await client.request('POST', '/v1/time/projects', { tenant: acme.name, query: { token: acme.bob.token }, body: { name: 'Secret', personal: true } })
  t.equal(secret.status, 201)
  const answer = await importFile(acme, 'toggl', `Email,Project,Start date,Start time,Duration\nada@${acme.name}.test,secret,2025-03-03,09:00,1:00\n`, { dry_run: true })
  t.match(answer.json, { created: { projects: 1 }, matched: { projects: 0 } })
  t.same(answer.json.preview[0].project, { name: 'secret', id: null, existing: false }, 'a new project, not Bob’s')
  t.notOk(answer.text.includes(secret.json.id), 'Bob’s project is not named')
})

t.test('limits: rows, bytes, columns, the length of a record', async (t) => {
  const acme = await freshTenant()
  const row = `ada@${acme.name}.test,2025-03-03,1\n`
  const tooManyRows = await importFile(acme, 'harvest', `Email,Date,Hours\n${row.repeat(MAX_IMPORT_ROWS + 1)}`)
  expectError(t, tooManyRows, 412, 'TL01-9002', 'a row over MAX_IMPORT_ROWS')
  t.match(tooManyRows.json.message, /at most 2000 rows \(MAX_IMPORT_ROWS\); line 2002 is past them/)
  const asMany = await importFile(acme, 'harvest', `Email,Date,Hours\n${row.repeat(MAX_IMPORT_ROWS)}`, { dry_run: true, preview: 0 })
  t.match(asMany.json, { rows: MAX_IMPORT_ROWS }, 'MAX_IMPORT_ROWS rows are taken')
  const tooManyBytes = await importFile(acme, 'harvest', `Email,Date,Hours\n${row.repeat(Math.ceil(MAX_IMPORT_BYTES / row.length))}`)
  expectError(t, tooManyBytes, 413, 'TL01-9006', 'over MAX_IMPORT_BYTES')
  t.match(tooManyBytes.json.message, /MAX_IMPORT_BYTES/)
  const wide = Array.from({ length: 257 }, (_, index) => `c${index}`)
  expectError(t, await importFile(acme, 'generic', `${wide.join(',')}\n${wide.join(',')}\n`), 412, 'TL01-9002', '257 columns')
  const long = await importFile(acme, 'harvest', `Email,Date,Hours,Notes\nada@${acme.name}.test,2025-03-03,1,${'x'.repeat(200_000)}\n`)
  expectError(t, long, 400, 'TL01-1105', 'a record of 200,000 characters')
  t.match(long.json.message, /^line 2: a record longer than 131072 characters/)
  t.same(await records(acme), [])
})

t.test('an import is one write in the change feed', async (t) => {
  const acme = await freshTenant()
  const feed = await openEventSourceFeed(client.port, acme.name, acme.token)
  t.teardown(() => feed.close())
  const answer = await importFile(acme, 'toggl', forTenant(fixture('toggl-detailed.csv'), acme))
  t.equal(answer.status, 201)
  const events = await feed.waitFor(1 + 2 + 1 + 2 + 4)
  t.equal(new Set(events.map((event) => event.seq)).size, 1, 'one log entry')
  t.ok(events.every((event) => event.kind === 'created'))
  const byResource = new Map<string, number>()
  for (const event of events) byResource.set(event.resource, (byResource.get(event.resource) ?? 0) + 1)
  t.same(Object.fromEntries(byResource), { 'time/clients': 1, 'time/projects': 2, 'time/tasks': 1, 'time/tags': 2, 'time/timerecords': 4 })
})

t.test('the tenant in the path', async (t) => {
  const acme = await freshTenant()
  const answer = await client.request('POST', `/tenant/${acme.name}/v1/import/generic`, {
    tenant: null,
    query: { token: acme.token, 'map.email': 'Email', 'map.date': 'Day', 'map.duration': 'Hours' },
    rawBody: `Email,Day,Hours\nbob@${acme.name}.test,2025-03-03,2.5\n`,
    headers: { 'content-type': 'text/csv' },
  })
  t.equal(answer.status, 201, answer.text)
  const [record] = await records(acme)
  t.equal(record.user.id, acme.bob.id)
  t.equal(record.duration, 9_000_000)
})
