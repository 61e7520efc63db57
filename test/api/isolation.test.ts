/*
 * Tenant isolation matrix. Tenant A ("alpha") holds at least one object of
 * every resource family; tenant B ("bravo") is used with A's tokens, ids,
 * storage keys and files. The families are walked from the declarations in
 * src/domain/resources/ (not listed here): for each public one, every
 * object of A read, changed, deleted, restored, `$set`, listed as an inner
 * collection, filtered for and referenced from a new B object through B's
 * address is refused or not found, and B's lists, counts, summaries,
 * reports, trash, batch answers and error messages never show anything of
 * A (its ids beyond the one B itself sent, its names, e-mails or tokens).
 * Each internal family (tokens, files, storage, password confirmations,
 * kept answers of Idempotency-Keys) has its own case, and a family without
 * one fails the test. B's log does not move for any of it (but for the
 * write B makes itself with the key A used).
 */
import t, { type Test } from 'tap'
import { RESOURCES } from '../../src/domain/resources/index.js'
import type { Rec, ResourceDecl } from '../../src/domain/schema.js'
import { api, type Api, ref } from '../helpers/api.js'
import type { TestResponse } from '../helpers/http.js'
import { basic } from '../helpers/identity.js'
import { requestConfirmationByMail } from '../helpers/mail.js'
import { startInProcess } from '../helpers/server.js'

const CANARY = 'alphacanary'
const server = await startInProcess(undefined, { RATE_LIMIT_REQUESTS: '0', LOGIN_FAILURES_ALLOWED: '0' })
t.teardown(() => server.stop())
const { client } = server
const ownerA = await client.createTenant('alpha', `owner.${CANARY}@alpha.test`, 'alpha-password')
const ownerB = await client.createTenant('bravo', 'owner@bravo.test', 'bravo-password')
const a = api(client, 'alpha', ownerA.token)
const b = api(client, 'bravo', ownerB.token)

// ---------------------------------------------------------------------------
// Tenant A: one object (at least) of every family, every name marked

async function seed(x: Api, mark: string): Promise<void> {
  const me = (await x.get('users/@self')).json.id as string
  const user = await x.create('users', { firstName: `${mark}User`, lastName: mark, email: `user.${mark}@${mark}.test`, password: 'user-password' })
  const workType = await x.create('time/worktypes', { name: `${mark}WorkType` })
  const customer = await x.create('time/clients', { name: `${mark}Client` })
  const project = await x.create('time/projects', { name: `${mark}Project`, client: ref(customer) })
  const task = await x.create('time/tasks', { name: `${mark}Task`, project: ref(project) })
  const tag = await x.create('time/tags', { name: `${mark}Tag`, color: '#123456' })
  await x.create('time/timerecords', { user: ref(me), project: ref(project), task: ref(task), duration: 3_600_000, start: '2024-06-10T09:00:00Z', description: `${mark}Work`, tags: [ref(tag)] })
  const expenseType = await x.create('time/expenseTypes', { name: `${mark}ExpenseType`, unitPrice: 1.5 })
  await x.create('time/expenses', { date: '2024-06-10T00:00:00Z', project: ref(project), expenseType: ref(expenseType), quantity: 3, note: `${mark}Expense` })
  await x.create('time/locks', { lockDate: '2000-01-01T00:00:00Z', note: `${mark}Lock` })
  await x.create(`time/projects/${project}/members`, { user: ref(user) })
  await x.create(`time/projects/${project}/worktypelinks`, { workType: ref(workType) })
  await x.create('time/impulses', { user: ref(me), project: ref(project), mode: 'PAUSE' })
  const bill = await x.create('billing/bills', { client: ref(customer), description: `${mark}Bill` })
  await x.create(`billing/bills/${bill}/items`, { quantity: 2, unitPrice: 10, description: `${mark}Item` })
  await x.create(`billing/bills/${bill}/vats`, { vatRate: 20, vatPrice: 4 })
  await x.create(`time/clients/${customer}/contacts`, { firstName: `${mark}Contact`, lastName: mark })
  const department = await x.create('departments', { name: `${mark}Department` })
  await x.create(`departments/${department}/members`, { user: ref(user) })
  await x.create('accesses', { user: ref(user), product: 'TIME' })
  await x.create('spendingtime', { user: ref(user), duration: 1_200_000 })
  await x.create('billing/pricelists/time', { price: 42, note: `${mark}Price`, project: ref(project) })
  await x.create('externalsystems', { name: `${mark}System` })
  const key = await x.post('users/@self/secretkeys', { name: `${mark}Key` })
  if (key.status !== 201) throw new Error(`secret key: ${key.status} ${key.text}`)
  const spare = await x.create('time/projects', { name: `${mark}Trashed` })
  if ((await x.del(`time/projects/${spare}`)).status !== 200) throw new Error('trash')
  const stored = await x.call('POST', `storage/${mark}Group/${mark}Key`, { rawBody: `${mark}Value`, headers: { 'content-type': 'text/plain' } })
  if (stored.status >= 300) throw new Error(`storage: ${stored.status} ${stored.text}`)
  const upload = await x.call('POST', `users/${me}/signature/upload`, {
    rawBody: Buffer.from(`${mark}Signature`).toString(),
    query: { filename: `${mark}.png` },
    headers: { 'content-type': 'image/png' },
  })
  if (upload.status >= 300) throw new Error(`upload: ${upload.status} ${upload.text}`)
}

// A only: an active webhook at an address that never answers, which the seed's work type gives a delivery being
// retried (in B, its retries would write while the checks below count B's writes).
await a.create('webhooks', { url: 'https://hooks.alphacanary.invalid/x', resources: 'time/worktypes' })
await seed(a, 'AlphaCanary')
await seed(b, 'Bravo')
const keyA = (await a.post('users/@self/secretkeys', { name: 'login key' })).json.secretKey as string
const meA = (await a.get('users/@self')).json.id as string
const meB = (await b.get('users/@self')).json.id as string
const refreshA = (await client.request('GET', '/v1/auth/login', { tenant: 'alpha', query: { apikey: client.apiKey }, headers: basic(ownerA.email, ownerA.password) })).json.refreshToken as string

const actorA = server.service.services.registry.get('alpha')
const actorB = server.service.services.registry.get('bravo')
if (actorA === undefined || actorB === undefined) throw new Error('tenants missing')
for (const deadline = Date.now() + 10_000; actorA.state.collection('WebhookDelivery').size === 0 && Date.now() < deadline; ) await new Promise((resolve) => setTimeout(resolve, 20))
const recordsOfA = (type: string): Rec[] => [...actorA.state.collection(type).values()]
const idsOfA = new Set<string>()
for (const collection of actorA.state.collections.values()) for (const rec of collection.values()) idsOfA.add(rec.id)
const secretsOfA = [CANARY, ownerA.token, keyA, refreshA].filter((secret): secret is string => typeof secret === 'string' && secret !== '')

// ---------------------------------------------------------------------------
// The checks every answer of B goes through

let cases = 0
const leaks: string[] = []
const seqOfB = () => actorB.state.seq

/** Records anything of A in an answer of B, other than what B itself sent (an id, a storage key echoed in a message). */
function scan(label: string, response: TestResponse, sent: readonly string[] = []): void {
  cases += 1
  let text = response.text
  for (const echoed of sent) text = text.split(echoed).join('')
  const lower = text.toLowerCase()
  for (const secret of secretsOfA) if (lower.includes(secret.toLowerCase())) leaks.push(`${label}: shows '${secret.slice(0, 12)}…' of A`)
  for (const id of idsOfA) if (text.includes(id)) leaks.push(`${label}: shows A's id ${id}`)
}

/** Refused (any 4xx) rather than served. */
function refused(t: Test, label: string, response: TestResponse): void {
  const fine = response.status >= 400 && response.status < 500
  t.ok(fine, `${label}: ${response.status} ${fine ? '' : response.text.slice(0, 200)}`)
}

/** A writable field of the declaration to name in `$set` (so the call is refused for the id, not for the field). */
function settableField(decl: ResourceDecl): string {
  const writable = decl.fields.filter((fieldDecl) => fieldDecl.access === 'READ_WRITE' && !fieldDecl.computed && fieldDecl.ref === undefined && fieldDecl.name !== 'id')
  return (writable.find((fieldDecl) => fieldDecl.type === 'String') ?? writable[0])?.name ?? 'version'
}

const STORAGE_NAMES = ['AlphaCanaryGroup', 'AlphaCanaryKey']
const PUBLIC = RESOURCES.filter((decl) => decl.path !== null && !decl.internal)

t.test('every public family: objects of A through B are refused or not found, and leak nothing', async (t) => {
  for (const decl of PUBLIC) {
    const path = decl.path as string
    const objects = recordsOfA(decl.type).slice(0, 3)
    t.ok(objects.length > 0, `A has objects of ${decl.type}`)
    const seqBefore = seqOfB()
    for (const object of objects) {
      const id = object.id
      const sent = [id]
      const attempts: [string, string, unknown?][] = [
        ['GET', `${path}/${id}`],
        ['PUT', `${path}/${id}?version_ignore=true`, { name: 'bravo takes over' }],
        ['DELETE', `${path}/${id}`],
        ['DELETE', `${path}/${id}?hard=true`],
        ['GET', `${path}/${id}/@deleted`],
        ['POST', `${path}/${id}/$set?${settableField(decl)}=1`],
        ...decl.inner.map((inner): [string, string] => ['GET', `${path}/${id}/${inner.name}`]),
      ]
      for (const [method, target, body] of attempts) {
        const [pathPart, queryPart] = target.split('?')
        const query = Object.fromEntries(new URLSearchParams(queryPart ?? ''))
        const response = await b.call(method, pathPart as string, { query, body })
        scan(`${decl.type} ${method} ${target}`, response, sent)
        if (response.status === 200 && Array.isArray(response.json)) t.same(response.json, [], `${decl.type} ${method} ${target}: an empty inner list`)
        else refused(t, `${decl.type} ${method} ${target}`, response)
      }
      const filtered = await b.get(path, { $filter: `id eq '${id}'` })
      scan(`${decl.type} $filter id`, filtered, sent)
      t.same(filtered.json, [], `${decl.type}: filtering B's list for A's id finds nothing`)
    }
    for (const view of ['', '/$count', '/@deleted', '/summary?summary=count()']) {
      const [pathPart, queryPart] = `${path}${view}`.split('?')
      const response = await b.call('GET', pathPart as string, { query: Object.fromEntries(new URLSearchParams(queryPart ?? '')) })
      scan(`${decl.type} GET ${path}${view}`, response)
    }
    const withTokenOfA = await client.request('GET', `/v1/${path}`, { tenant: 'bravo', query: { token: ownerA.token } })
    scan(`${decl.type} with A's token`, withTokenOfA)
    t.equal(withTokenOfA.status, 401, `${decl.type}: A's token means nothing at B`)
    t.equal(seqOfB(), seqBefore, `${decl.type}: nothing was written to B`)
  }
})

t.test('references from a new B object to any object of A are refused', async (t) => {
  for (const decl of PUBLIC.filter((candidate) => candidate.creatable)) {
    // A derived reference (Bill.items) is never read from a body: it cannot name anything.
    for (const fieldDecl of decl.fields.filter((candidate) => candidate.ref !== undefined && candidate.name !== 'trashItem' && !candidate.computed)) {
      const target = recordsOfA(fieldDecl.ref as string)[0]
      if (target === undefined) continue
      const seqBefore = seqOfB()
      const response = await b.post(decl.path as string, { [fieldDecl.name]: fieldDecl.list ? [{ id: target.id }] : { id: target.id } })
      scan(`${decl.type}.${fieldDecl.name} → A's ${fieldDecl.ref}`, response, [target.id])
      refused(t, `${decl.type}.${fieldDecl.name} → A's ${fieldDecl.ref}`, response)
      t.equal(seqOfB(), seqBefore, `${decl.type}.${fieldDecl.name}: nothing was written`)
    }
  }
})

t.test("B's reports, trash, batch and storage show nothing of A", async (t) => {
  const projectA = recordsOfA('Project')[0] as Rec
  const trashA = recordsOfA('TrashItem')[0] as Rec
  const reports = ['readtotals', 'groupedtotals', 'singletotals', 'trendedtotals', 'singleslices']
  for (const name of reports) {
    const queries: Record<string, string | number>[] = [
      { range: 365, range_from: '2024-06-15', summary: 'project/id' },
      { range: 365, range_from: '2024-06-15', $filter: `project/id eq '${projectA.id}'` },
    ]
    for (const query of queries) {
      const response = await b.get(`time/reports/${name}`, query)
      scan(`report ${name}`, response, [projectA.id])
      t.ok(response.status < 500, `report ${name}: ${response.status}`)
    }
  }
  const restore = await b.get(`trash/${trashA.id}/$restore`)
  scan('restore of A trash item', restore, [trashA.id])
  refused(t, 'restore of an A trash item at B', restore)
  const items = PUBLIC.flatMap((decl) =>
    recordsOfA(decl.type)
      .slice(0, 1)
      .map((rec, index) => ({ id: `${decl.type}-${index}`, method: 'GET', path: `/v1/${decl.path}/${rec.id}` })),
  )
  const batch = await b.post('batch', items)
  scan(
    'batch of reads of A objects',
    batch,
    items.map((item) => item.path.split('/').at(-1) as string),
  )
  t.equal(batch.status, 200)
  for (const answer of batch.json as { id: string; code: number }[]) t.ok([403, 404].includes(answer.code), `batch item ${answer.id}: ${answer.code}`)
  const group = await b.get('storage/AlphaCanaryGroup')
  scan('storage group of A', group, STORAGE_NAMES)
  const entry = await b.get('storage/AlphaCanaryGroup/AlphaCanaryKey')
  scan('storage entry of A', entry, STORAGE_NAMES)
  t.equal(entry.status, 404, "A's storage key means nothing at B")
  const removal = await b.del('storage/AlphaCanaryGroup/AlphaCanaryKey')
  t.equal(removal.status, 404)
  t.equal((await a.get('storage/AlphaCanaryGroup/AlphaCanaryKey')).status, 200, "A's entry is still there")
})

/** The families that have no public path, each with its own case; a new internal family without one fails. */
const INTERNAL_CASES: Record<string, (t: Test) => Promise<void>> = {
  async AuthToken(t) {
    for (const path of ['users/@self', 'auth/logout', 'time/projects']) {
      const response = await client.request('GET', `/v1/${path}`, { tenant: 'bravo', query: { token: ownerA.token } })
      scan(`A token on ${path}`, response)
      t.equal(response.status, 401, `A's token on B's ${path}`)
    }
    const refresh = await client.request('GET', '/v1/auth/refreshtoken', { tenant: 'bravo', query: { apikey: client.apiKey, refresh_token: refreshA } })
    scan("A's refresh token at B", refresh)
    t.equal(refresh.status, 401, "A's refresh token at B")
    const byKey = await client.request('GET', '/v1/auth/login', { tenant: 'bravo', query: { apikey: client.apiKey }, headers: basic(keyA, '') })
    scan("A's secret key at B", byKey)
    t.equal(byKey.status, 401, "A's secret key logs nobody in at B")
    const byPassword = await client.request('GET', '/v1/auth/login', { tenant: 'bravo', query: { apikey: client.apiKey }, headers: basic(ownerA.email, ownerA.password) })
    scan("A's owner credentials at B", byPassword)
    t.equal(byPassword.status, 401, "A's e-mail and password log nobody in at B")
    t.equal((await client.request('GET', '/v1/users/@self', { tenant: 'alpha', query: { token: ownerA.token } })).status, 200, "A's token still works at A")
  },
  async FileMetadata(t) {
    for (const [method, path] of [
      ['GET', `users/${meA}/signature`],
      ['GET', `users/${meA}/signature/download`],
      ['DELETE', `users/${meA}/signature`],
    ] as const) {
      const response = await b.call(method, path)
      scan(`${method} ${path} at B`, response, [meA])
      refused(t, `${method} A's signature at B`, response)
    }
    const upload = await b.call('POST', `users/${meA}/signature/upload`, { rawBody: 'bravo bytes', query: { filename: 'b.png' }, headers: { 'content-type': 'image/png' } })
    scan("upload to A's user at B", upload, [meA])
    refused(t, "upload to A's user at B", upload)
    const own = await b.call('GET', `users/${meB}/signature/download`)
    t.equal(own.text, 'BravoSignature', "B's own file is B's bytes")
    t.equal((await a.call('GET', `users/${meA}/signature/download`)).text, 'AlphaCanarySignature', "A's file is untouched")
  },
  async StorageEntry(t) {
    const response = await b.get('storage/AlphaCanaryGroup/AlphaCanaryKey')
    scan('storage key of A', response, STORAGE_NAMES)
    t.equal(response.status, 404)
    const own = await b.get('storage/BravoGroup/BravoKey')
    t.equal(own.status, 200, "B's own key works")
    scan("B's own storage entry", own)
  },
  async KeptAnswer(t) {
    const body = { name: 'kept answer project' }
    const atA = await a.call('POST', 'time/projects', { body, headers: { 'Idempotency-Key': 'isolation-key' } })
    t.equal(atA.status, 201)
    const atB = await b.call('POST', 'time/projects', { body, headers: { 'Idempotency-Key': 'isolation-key' } })
    scan("A's Idempotency-Key at B", atB)
    t.equal(atB.status, 201, "A's key is no key at B: a write of B's own")
    t.equal(atB.headers['idempotent-replayed'], undefined, "A's kept answer is not answered at B")
    t.not(atB.json.id, atA.json.id)
  },
  async CalendarSecret(t) {
    const made = await a.post('users/@self/calendar/secret', {})
    t.equal(made.status, 201, 'A makes a calendar secret')
    const secret = made.json.secret as string
    const atA = await client.request('GET', '/v1/users/@self/calendar.ics', { tenant: 'alpha', query: { secret } })
    t.equal(atA.status, 200, "A's secret opens A's feed")
    const atB = await client.request('GET', '/v1/users/@self/calendar.ics', { tenant: 'bravo', query: { secret } })
    scan("A's calendar secret at B", atB, [secret])
    t.equal(atB.status, 401, "A's calendar secret opens nothing at B")
    const shownAtB = await b.get('users/@self/calendar/secret')
    scan("B's calendar secret state", shownAtB, [secret])
  },
  async PasswordConfirmation(t) {
    const id = await requestConfirmationByMail(client, server.dataDir, ownerA.email)
    const atB = await client.request('POST', `/v1/auth/confirm/${id}`, { tenant: 'bravo', query: { apikey: client.apiKey } })
    scan("A's confirmation id at B", atB, [id])
    refused(t, "A's password confirmation at B's address", atB)
  },
}

t.test('internal families: tokens, files, storage keys, password confirmations', async (t) => {
  for (const decl of RESOURCES.filter((candidate: ResourceDecl) => candidate.path === null || candidate.internal)) {
    const check = INTERNAL_CASES[decl.type]
    t.ok(check !== undefined, `internal family ${decl.type} has an isolation case`)
    if (check !== undefined) await t.test(decl.type, check)
  }
})

t.test('nothing of A appeared anywhere at B', async (t) => {
  t.same(leaks.slice(0, 20), [], `${cases} answers of B scanned`)
  console.log(`ISOLATION_FIGURES families=${RESOURCES.length} cases=${cases} leaks=${leaks.length}`)
})
