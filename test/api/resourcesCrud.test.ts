/*
 * Every resource declared for issue 4, over HTTP, from one table: create,
 * read, a list narrowed by $filter, update, $metadata, $dummy, an XML
 * round trip (POST application/xml, GET format=xml), a constraint violation
 * and a reference to a missing object. Each spec gives a valid body per
 * variant ('json' and 'xml' differ in the value the filter looks for).
 *
 * A resource the API does not create (`make`: the Account, made by
 * sign-up; a TrashItem, made by deleting something) is checked to refuse
 * POST with a 4xx; its body is then written by PUT onto the made object
 * when it can be updated (the Account), or is what the made object shows
 * (a TrashItem, which refuses PUT as well).
 */
import { XMLValidator } from 'fast-xml-parser'
import t from 'tap'
import { api, newUser, ref } from '../helpers/api.js'
import { startInProcess } from '../helpers/server.js'
import { inClusterParitySuite } from '../helpers/paritySuite.js'

inClusterParitySuite()

const server = await startInProcess()
t.teardown(() => server.stop())
const { client } = server
const owner = api(client, 'crud', (await client.createTenant('crud')).token)
const ownerId = (await owner.get('users/@self')).json.id as string
const userB = (await newUser(client, 'crud', owner, 'Bert')).id
const userC = (await newUser(client, 'crud', owner, 'Cleo')).id
const clientId = await owner.create('time/clients', { name: 'Client One' })
const project = await owner.create('time/projects', { name: 'Main', client: ref(clientId) })
const project2 = await owner.create('time/projects', { name: 'Second' })
const task = await owner.create('time/tasks', { name: 'Base task', project: ref(project) })
const workType = await owner.create('time/worktypes', { name: 'Design' })
const workType2 = await owner.create('time/worktypes', { name: 'Review' })
const contact = await owner.create('time/contacts', { firstName: 'Ann', lastName: 'Contact', client: ref(clientId) })
const bill = await owner.create('billing/bills', { description: 'base bill', client: ref(clientId) })
const department = await owner.create('departments', { name: 'Base department' })
const accountId = (await owner.get('accounts/@own')).json.id as string
/** Objects deleted by the TrashItem spec: their trash items are the objects under test. */
const doomed = { json: await owner.create('time/worktypes', { name: 'doomed-json' }), xml: await owner.create('time/worktypes', { name: 'doomed-xml' }) }
const MISSING = '00000000-0000-4000-8000-000000000000'

type Variant = 'json' | 'xml'
type Body = Record<string, unknown>

interface Spec {
  type: string
  path: string
  xmlItem: string
  /** The body written (POST, or PUT onto a made object); for a resource nobody writes, what the made object shows. */
  body: (variant: Variant) => Body
  /** For a resource the API does not create: makes (or finds) the object of a variant and returns its id. */
  make?: (variant: Variant) => Promise<string>
  filter: string
  /** Absent: the resource cannot be updated, PUT is refused. */
  update?: Body
  /** Checked on the read after the update. */
  updated?: Body
  /** Absent only where no field can be written. */
  violation?: { body: Body; field: string; constraint: string }
  /** null: the resource has no reference field that can be written ($metadata is checked to say so). */
  missingRef: string | null
  displayName?: string
}

const SPECS: Spec[] = [
  {
    type: 'TimeRecord',
    path: 'time/timerecords',
    xmlItem: 'timeRecord',
    body: (v) => ({
      user: ref(ownerId),
      project: ref(project),
      task: ref(task),
      workType: ref(workType),
      start: '2024-05-01T08:00:00Z',
      stop: '2024-05-01T09:00:00Z',
      duration: 3600000,
      description: `tr-${v}`,
      billable: true,
    }),
    filter: "description eq 'tr-json'",
    update: { description: 'tr-json-2', approved: true },
    updated: { description: 'tr-json-2', approved: true, effective: true, billed: null },
    violation: { body: { duration: -1 }, field: 'duration', constraint: 'Min' },
    missingRef: 'project',
    displayName: 'Owner Olive',
  },
  {
    type: 'Task',
    path: 'time/tasks',
    xmlItem: 'task',
    body: (v) => ({ name: `task-${v}`, code: 'T1', project: ref(project), owner: ref(userB), timeBudget: 7200000 }),
    filter: "name eq 'task-json'",
    update: { done: true, note: 'finished' },
    updated: { done: true, note: 'finished', effective: true, author: { id: ownerId } },
    violation: { body: { name: 'x', code: 'c'.repeat(21) }, field: 'code', constraint: 'Size' },
    missingRef: 'project',
    displayName: 'task-json',
  },
  {
    type: 'ContactPerson',
    path: 'time/contacts',
    xmlItem: 'contactPerson',
    body: (v) => ({ firstName: 'Cora', lastName: `contact-${v}`, email: 'cora@example.com', client: ref(clientId) }),
    filter: "lastName eq 'contact-json'",
    update: { jobTitle: 'CFO' },
    updated: { jobTitle: 'CFO' },
    violation: { body: { email: 'not-an-email' }, field: 'email', constraint: 'Email' },
    missingRef: 'client',
    displayName: 'contact-json Cora',
  },
  {
    type: 'Impulse',
    path: 'time/impulses',
    xmlItem: 'impulse',
    body: (v) => ({ user: ref(ownerId), mode: 'PAUSE', description: `imp-${v}`, project: ref(project), duration: 1000 }),
    filter: "description eq 'imp-json'",
    update: { watchTimeout: 60000 },
    updated: { watchTimeout: 60000, mode: 'PAUSE' },
    violation: { body: { mode: 'RUNNING' }, field: 'mode', constraint: 'Enum' },
    missingRef: 'workType',
    displayName: 'Owner Olive',
  },
  {
    type: 'WorkType',
    path: 'time/worktypes',
    xmlItem: 'workType',
    body: (v) => ({ name: `wt-${v}`, code: 'W', category: 'WORK' }),
    filter: "name eq 'wt-json'",
    update: { active: false },
    updated: { active: false, effective: true },
    violation: { body: { category: 'SLEEP' }, field: 'category', constraint: 'Enum' },
    missingRef: 'externalSystem',
    displayName: 'wt-json',
  },
  {
    type: 'ProjectMember',
    path: 'time/projectmembers',
    xmlItem: 'projectMember',
    body: (v) => ({ user: ref(v === 'json' ? userB : userC), project: ref(project2) }),
    filter: `user/id eq '${userB}' and project/id eq '${project2}'`,
    update: { user: ref(ownerId) },
    updated: { user: { id: ownerId }, project: { id: project2 } },
    violation: { body: { user: null, project: ref(project2) }, field: 'user', constraint: 'NotNull' },
    missingRef: 'user',
    displayName: 'Tester Bert',
  },
  {
    type: 'ProjectWorkTypeLink',
    path: 'time/projectworktypelinks',
    xmlItem: 'projectWorkTypeLink',
    body: (v) => ({ workType: ref(v === 'json' ? workType : workType2), project: ref(project2) }),
    filter: `workType/id eq '${workType}'`,
    update: { project: ref(project) },
    updated: { project: { id: project }, workType: { id: workType } },
    violation: { body: { project: ref(project2) }, field: 'workType', constraint: 'NotNull' },
    missingRef: 'workType',
    displayName: 'Design',
  },
  {
    type: 'TimePriceList',
    path: 'billing/pricelists/time',
    xmlItem: 'timePriceList',
    body: (v) => ({ price: v === 'json' ? 42.5 : 55, note: `pl-${v}`, user: ref(ownerId), workType: ref(workType) }),
    filter: "note eq 'pl-json'",
    update: { price: 50 },
    updated: { price: 50, displayName: '50' },
    violation: { body: { id: 'NOT-A-UUID', price: 1 }, field: 'id', constraint: 'Pattern' },
    missingRef: 'workType',
    displayName: '42.5',
  },
  {
    type: 'Bill',
    path: 'billing/bills',
    xmlItem: 'bill',
    body: (v) => ({ description: `bill-${v}`, client: ref(clientId), contactPerson: ref(contact), vatMode: 'DECLARE_VAT', docDate: '2024-05-02T00:00:00Z', draft: true }),
    filter: "description eq 'bill-json'",
    update: { draft: false, notes: 'paid' },
    updated: { draft: false, notes: 'paid', itemsPrice: 0, totalPrice: 0, author: { id: ownerId } },
    violation: { body: { vatMode: 'SOME_VAT' }, field: 'vatMode', constraint: 'Enum' },
    missingRef: 'client',
  },
  {
    type: 'BillItem',
    path: 'billing/billitems',
    xmlItem: 'billItem',
    body: (v) => ({ bill: ref(bill), docIndex: v === 'json' ? 1 : 2, itemGroup: `grp-${v}`, quantity: 3, unit: 'h', unitPrice: 10.5 }),
    filter: "itemGroup eq 'grp-json'",
    update: { quantity: 4 },
    updated: { quantity: 4, price: 42 },
    violation: { body: { docIndex: 1 }, field: 'bill', constraint: 'NotNull' },
    missingRef: 'bill',
    displayName: '#1',
  },
  {
    type: 'BillVat',
    path: 'billing/billvats',
    xmlItem: 'billVat',
    body: (v) => ({ bill: ref(bill), vatRate: v === 'json' ? 21 : 10, vatPrice: 6.62 }),
    filter: `vatRate eq 21 and bill/id eq '${bill}'`,
    update: { vatPrice: 7 },
    updated: { vatPrice: 7, vatRate: 21 },
    violation: { body: { vatRate: 21 }, field: 'bill', constraint: 'NotNull' },
    missingRef: 'bill',
    displayName: '21',
  },
  {
    type: 'Access',
    path: 'accesses',
    xmlItem: 'access',
    body: (v) => ({ user: ref(v === 'json' ? userB : userC), product: 'TIME' }),
    filter: `user/id eq '${userB}'`,
    update: { product: 'BILLING' },
    updated: { product: 'BILLING', displayName: 'BILLING' },
    violation: { body: { user: ref(userB), product: 'GAMES' }, field: 'product', constraint: 'Enum' },
    missingRef: 'user',
    displayName: 'TIME',
  },
  {
    type: 'Department',
    path: 'departments',
    xmlItem: 'department',
    body: (v) => ({ name: `dep-${v}`, manager: ref(ownerId) }),
    filter: "name eq 'dep-json'",
    update: { name: 'dep-renamed' },
    updated: { name: 'dep-renamed', displayName: 'dep-renamed' },
    violation: { body: { id: 'NOT-A-UUID' }, field: 'id', constraint: 'Pattern' },
    missingRef: 'manager',
    displayName: 'dep-json',
  },
  {
    type: 'DepartmentMember',
    path: 'departmentmembers',
    xmlItem: 'departmentMember',
    body: (v) => ({ department: ref(department), user: ref(v === 'json' ? userB : userC) }),
    filter: `user/id eq '${userB}'`,
    update: { user: ref(ownerId) },
    updated: { user: { id: ownerId }, displayName: 'Owner Olive' },
    violation: { body: { user: ref(userB) }, field: 'department', constraint: 'NotNull' },
    missingRef: 'department',
    displayName: 'Tester Bert',
  },
  {
    type: 'SpendingTimeUnit',
    path: 'spendingtime',
    xmlItem: 'spendingTimeUnit',
    body: (v) => ({ user: ref(ownerId), begin: '2024-05-03T10:00:00Z', end: '2024-05-03T10:20:00Z', duration: v === 'json' ? 1200000 : 5400000 }),
    filter: 'duration eq 1200000',
    update: { duration: 5430000 },
    updated: { duration: 5430000, displayName: '1h 30m 30s' },
    violation: { body: { duration: -5 }, field: 'duration', constraint: 'Min' },
    missingRef: 'user',
    displayName: '20m',
  },
  {
    type: 'Client',
    path: 'time/clients',
    xmlItem: 'client',
    body: (v) => ({ name: `client-${v}`, code: 'CL1', email: 'billing@client.test', city: 'Brno', countryCode: v === 'json' ? 'CZE' : 'SVK' }),
    filter: "name eq 'client-json'",
    update: { active: false, zipCode: '60200' },
    updated: { active: false, zipCode: '60200', countryCode: 'CZE', displayName: 'client-json' },
    violation: { body: { name: 'x', countryCode: 'CZ1' }, field: 'countryCode', constraint: 'Pattern' },
    missingRef: 'externalSystem',
    displayName: 'client-json',
  },
  {
    type: 'User',
    path: 'users',
    xmlItem: 'user',
    body: (v) => ({ firstName: 'Uma', lastName: `user-${v}`, email: `uma-${v}@crud.test`, phone: '+420 1', position: 'analyst', weekStart: 2 }),
    filter: "lastName eq 'user-json'",
    update: { position: 'lead', weekStart: 7 },
    updated: { position: 'lead', weekStart: 7, email: 'uma-json@crud.test', active: true, admin: false, confirmed: true },
    violation: { body: { email: 'not-an-email' }, field: 'email', constraint: 'Email' },
    missingRef: null,
    displayName: 'user-json Uma',
  },
  {
    type: 'Account',
    path: 'accounts',
    xmlItem: 'account',
    make: async () => accountId,
    body: (v) => ({ name: `Crud ${v} Ltd`, currency: v === 'json' ? 'CZK' : 'EUR', vatId: `CZ-${v}`, owner: ref(ownerId) }),
    filter: "name eq 'Crud json Ltd'",
    update: { phone: '+420 2', website: 'https://crud.test' },
    updated: { phone: '+420 2', website: 'https://crud.test', name: 'Crud json Ltd', urlPrefix: 'crud', displayName: 'Crud json Ltd (crud)' },
    violation: { body: { name: null }, field: 'name', constraint: 'NotNull' },
    missingRef: 'owner',
    displayName: 'Crud json Ltd (crud)',
  },
  {
    type: 'ExternalSystem',
    path: 'externalsystems',
    xmlItem: 'externalSystem',
    body: (v) => ({ name: `ext-${v}`, integrationPlugin: v === 'json' ? 'jira' : 'redmine' }),
    filter: "name eq 'ext-json'",
    update: { integrationPlugin: 'gitlab' },
    updated: { integrationPlugin: 'gitlab', name: 'ext-json' },
    violation: { body: { id: 'NOT-A-UUID' }, field: 'id', constraint: 'Pattern' },
    missingRef: null,
    displayName: 'ext-json',
  },
  {
    type: 'TrashItem',
    path: 'trash',
    xmlItem: 'trashItem',
    make: async (v) => (await owner.del(`time/worktypes/${doomed[v]}`)).json.trashItem.id as string,
    body: (v) => ({ deletedObjectId: doomed[v], deletedObjectType: 'WorkType', deletedBy: ref(ownerId) }),
    filter: `deletedObjectId eq '${doomed.json}'`,
    missingRef: null,
    displayName: `WorkType (${doomed.json})`,
  },
  {
    type: 'SecretKey',
    path: 'secretkeys',
    xmlItem: 'secretKey',
    body: (v) => ({ name: `key-${v}` }),
    filter: "name eq 'key-json'",
    update: { name: 'key-renamed' },
    updated: { name: 'key-renamed', secretKey: null, user: { id: ownerId } },
    // No violation and no reference to write: the name has no constraint, the id, text and user are the server's
    // (identitySecretKeyTakeover.test.ts).
    missingRef: null,
    displayName: 'key-json',
  },
]

/** An XML request body: references as `<field><id>…</id></field>`, everything else as text. */
function toXml(root: string, body: Body): string {
  const parts = Object.entries(body).map(([name, value]) => {
    if (typeof value === 'object' && value !== null) return `<${name}><id>${String((value as { id: string }).id)}</id></${name}>`
    return `<${name}>${String(value)}</${name}>`
  })
  return `<${root}>${parts.join('')}</${root}>`
}

/** The value a field of the body shows on a JSON read. */
function expectedJson(value: unknown): unknown {
  if (typeof value === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(value)) return `/Date(${Date.parse(value)})/`
  return value
}

/** The fields `$metadata` shows as references (they carry the referenced path) that a request may write. */
async function writableReferenceFields(spec: Spec): Promise<string[]> {
  const metadata = await owner.get(`${spec.path}/$metadata`)
  const fields = metadata.json.fields as { name: string; path?: string; access: string }[]
  // trashItem is read-write, but the only value a request may write is null (a trash item comes by DELETE).
  return fields.filter((field) => field.path !== undefined && field.access !== 'READ_ONLY' && field.name !== 'trashItem').map((field) => field.name)
}

/**
 * Writes the body of a variant: POSTed to the collection, or, for a made
 * object, PUT onto it at its current version. Answers the id and whether it was stored.
 */
async function write(spec: Spec, variant: Variant, body: Body, xml: boolean): Promise<{ id: string; ok: boolean; text: string }> {
  const options = xml ? { rawBody: toXml(spec.xmlItem, body), headers: { 'content-type': 'application/xml' } } : { body }
  if (spec.make === undefined) {
    const created = await owner.call('POST', spec.path, { ...options, query: { response_object: true } })
    return { id: created.json?.id as string, ok: created.status === 201, text: created.text }
  }
  const id = await spec.make(variant)
  const version = (await owner.get(`${spec.path}/${id}`)).json.version as number
  const withVersion = { ...body, version }
  const written = await owner.call('PUT', `${spec.path}/${id}`, xml ? { rawBody: toXml(spec.xmlItem, withVersion), headers: options.headers } : { body: withVersion })
  return { id, ok: written.status === 200 && written.json.version === version + 1, text: written.text }
}

for (const spec of SPECS) {
  t.test(spec.type, async (t) => {
    const body = spec.body('json')
    const writable = spec.make === undefined || spec.update !== undefined
    let id: string
    if (spec.make !== undefined) {
      const refused = await owner.post(spec.path, body)
      t.equal(refused.status, 400, `POST ${spec.path} is refused: ${refused.text}`)
      t.equal(refused.json.code, 'TL01-1103')
      t.match(refused.json.message, /cannot be created/, 'the refusal says why')
    }
    if (writable) {
      const created = await write(spec, 'json', body, false)
      t.ok(created.ok, `create: ${created.text}`)
      id = created.id
    } else {
      if (spec.make === undefined) throw new Error(`${spec.type}: not writable, so made by make`)
      id = await spec.make('json')
    }

    const read = await owner.get(`${spec.path}/${id}`)
    t.equal(read.status, 200)
    for (const [name, value] of Object.entries(body)) t.match(read.json[name], expectedJson(value), `read ${name}`)
    if (spec.displayName !== undefined) t.equal(read.json.displayName, spec.displayName, 'displayName')
    const version = read.json.version as number
    if (spec.make === undefined) t.equal(version, 1)

    const filtered = await owner.get(spec.path, { $filter: spec.filter })
    t.equal(filtered.status, 200, `filter: ${filtered.text}`)
    t.same(
      filtered.json?.map?.((rec: { id: string }) => rec.id),
      [id],
      `$filter ${spec.filter}`,
    )

    if (spec.update !== undefined) {
      const updated = await owner.put(`${spec.path}/${id}`, { ...spec.update, version })
      t.same(updated.json, { id, version: version + 1 }, `update: ${updated.text}`)
      t.match((await owner.get(`${spec.path}/${id}`)).json, { ...spec.updated, version: version + 1 }, 'updated values')
    } else {
      const refused = await owner.put(`${spec.path}/${id}`, { ...body, version })
      t.equal(refused.status, 400, `PUT is refused: ${refused.text}`)
      t.equal(refused.json.code, 'TL01-1103')
      t.match(refused.json.message, /cannot be changed/, 'the refusal says why')
      t.equal((await owner.post(`${spec.path}/${id}/$set`, undefined, { deletedObjectType: 'Task' })).json.code, 'TL01-1103', '$set is refused too')
      t.same((await owner.get(`${spec.path}/${id}`)).json, read.json, 'and nothing changed')
    }

    const metadata = await owner.get(`${spec.path}/$metadata`)
    t.equal(metadata.json.type, spec.type)
    t.equal(metadata.json.path, `/v1/${spec.path}`)
    const fieldNames = (metadata.json.fields as { name: string }[]).map((field) => field.name)
    for (const name of Object.keys(body)) t.ok(fieldNames.includes(name), `$metadata names ${name}`)

    const dummy = await owner.get(`${spec.path}/$dummy`)
    t.equal(dummy.status, 200)
    for (const name of Object.keys(body)) t.ok(name in dummy.json, `$dummy has ${name}`)

    const xmlBody = spec.body('xml')
    let xmlId: string
    if (writable) {
      const xmlCreated = await write(spec, 'xml', xmlBody, true)
      t.ok(xmlCreated.ok, `XML write: ${xmlCreated.text}`)
      xmlId = xmlCreated.id
    } else {
      if (spec.make === undefined) throw new Error(`${spec.type}: not writable, so made by make`)
      xmlId = await spec.make('xml')
    }
    const xmlRead = await owner.get(`${spec.path}/${xmlId}`, { format: 'xml' })
    t.match(xmlRead.headers['content-type'], /application\/xml/)
    t.match(xmlRead.text, new RegExp(`<${spec.xmlItem}><id>${xmlId}</id>`), 'XML root and id')
    for (const [name, value] of Object.entries(xmlBody)) {
      if (typeof value === 'object' && value !== null) t.match(xmlRead.text, `<${name}><id>${(value as { id: string }).id}</id>`, `XML ${name}`)
      else if (typeof value === 'string' && /^\d{4}-/.test(value)) t.match(xmlRead.text, `<${name}>${new Date(value).toISOString()}</${name}>`, `XML ${name}`)
      else t.match(xmlRead.text, `<${name}>${String(value)}</${name}>`, `XML ${name}`)
    }

    if (spec.violation !== undefined) {
      const before = (await owner.get(`${spec.path}/${id}`)).json
      const invalid = spec.make === undefined ? await owner.post(spec.path, { ...spec.violation.body }) : await owner.put(`${spec.path}/${id}`, spec.violation.body, { version_ignore: true })
      t.equal(invalid.status, 412, `violation: ${invalid.text}`)
      t.equal(invalid.json.code, 'TL01-1104')
      t.match(invalid.json.constraintViolation, { entityType: spec.type, field: spec.violation.field, constraint: spec.violation.constraint })
      if (spec.make !== undefined) t.same((await owner.get(`${spec.path}/${id}`)).json, before, 'a refused update changes nothing')
    }

    if (spec.missingRef === null) {
      if (writable) t.same(await writableReferenceFields(spec), [], 'no reference field a request could point at a missing object')
    } else {
      const dangling =
        spec.make === undefined
          ? await owner.post(spec.path, { ...body, [spec.missingRef]: ref(MISSING) })
          : await owner.put(`${spec.path}/${id}`, { [spec.missingRef]: ref(MISSING) }, { version_ignore: true })
      t.equal(dangling.status, 412, `missing reference: ${dangling.text}`)
      t.match(dangling.json?.constraintViolation, { field: spec.missingRef, constraint: 'Reference' })
    }
  })
}

t.test('read-only and derived fields are ignored on input', async (t) => {
  const item = await owner.post('billing/billitems', { bill: ref(bill), quantity: 2, unitPrice: 1.005, price: 999 }, { response_object: true })
  t.equal(item.json.price, 2.01, 'price = unitPrice × quantity, rounded half away from zero')
  const numbered = await owner.post('billing/bills', { description: 'numbered', docNumber: 999 }, { response_object: true })
  t.not(numbered.json.docNumber, 999, 'docNumber is made by the server')
  const recordBilled = await owner.post('time/timerecords', { user: ref(ownerId), billed: true }, { response_object: true })
  t.equal(recordBilled.json.billed, null, 'billed is read-only')
  const secretKeyMeta = await owner.get('secretkeys/$metadata')
  t.match(
    secretKeyMeta.json.fields.find((field: { name: string }) => field.name === 'secretKey'),
    { access: 'READ_ONLY' },
  )
  const billMeta = await owner.get('billing/bills/$metadata')
  // Its PERSIST and MERGE cascades (items and VAT rows saved with the bill): test/api/innerMetadata.test.ts.
  t.same(billMeta.json.cascades[0], { cascadeType: 'REMOVE', objectTypes: ['TrashItem', 'BillItem', 'BillVat'] })
  for (const name of ['docNumber', 'itemsPrice', 'totalPrice']) {
    t.match(
      billMeta.json.fields.find((field: { name: string }) => field.name === name),
      { access: 'READ_ONLY' },
      `${name} is read-only`,
    )
  }
  const userMeta = await owner.get('users/$metadata')
  t.same(userMeta.json.cascades, [{ cascadeType: 'REMOVE', objectTypes: ['TrashItem', 'Access', 'ProjectMember', 'SecretKey', 'SpendingTimeUnit'] }])
})

t.test('the secret-key routes of users/@self still work with the declaration', async (t) => {
  const made = await owner.post('users/@self/secretkeys', { name: 'cli' })
  t.equal(made.status, 201, made.text)
  t.type(made.json.secretKey, 'string')
  t.match(made.json, { name: 'cli', displayName: 'cli', user: { id: ownerId } })
  const listed = await owner.get('users/@self/secretkeys')
  t.ok(
    listed.json.some((key: { id: string; secretKey: unknown }) => key.id === made.json.id && key.secretKey === null),
    'the key text is never shown again',
  )
})

t.test('a day or time that does not exist is refused, not carried over into the next month', async (t) => {
  for (const start of ['2026-02-30T10:00:00Z', '2025-02-29', '2026-13-01T00:00:00Z', '2026-04-31', '2026-01-01T24:00:00Z', '2026-01-01T10:60Z']) {
    const refused = await owner.post('time/timerecords', { user: ref(ownerId), start })
    t.equal(refused.status, 412, `${start}: 412`)
    t.match(refused.json, { code: 'TL01-1104', constraintViolations: [{ entityType: 'TimeRecord', field: 'start', constraint: 'Date' }] }, `${start}: names the field`)
  }
  const leapDay = await owner.post('time/timerecords', { user: ref(ownerId), start: '2028-02-29T10:00:00Z' }, { response_object: true })
  t.equal(leapDay.status, 201, 'a leap day exists')
  t.equal(leapDay.json.start, `/Date(${Date.UTC(2028, 1, 29, 10)})/`)
  t.equal((await owner.get('time/timerecords', { $filter: `id eq '${leapDay.json.id}'` })).json.length, 1)
})

t.test('a string with characters XML cannot carry still gives XML that parses', async (t) => {
  const name = 'ctl\u0001 bell\u0007 nonchar\uFFFF lone\uD800 pair\uD83D\uDE00 tab\tend'
  const id = await owner.create('time/worktypes', { name })
  t.equal((await owner.get(`time/worktypes/${id}`)).json.name, name, 'JSON gives the string as stored')
  for (const [label, answer] of [
    ['one object', await owner.get(`time/worktypes/${id}`, { format: 'xml' })],
    ['a list', await owner.get('time/worktypes', { format: 'xml', $filter: `id eq '${id}'` })],
  ] as const) {
    t.equal(answer.status, 200)
    t.equal(XMLValidator.validate(answer.text), true, `${label}: well-formed`)
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters XML forbids are what this looks for
    t.notMatch(answer.text, /[\u0001\u0007\uFFFF]/, `${label}: no character XML forbids`)
    t.match(answer.text, 'ctl\uFFFD bell\uFFFD nonchar\uFFFD lone\uFFFD pair\uD83D\uDE00 tab\tend', `${label}: each replaced by U+FFFD, pairs and tabs kept`)
  }
})

t.test('trashItem is read-write as the spec declares it: null may be written, a trash item only by DELETE', async (t) => {
  for (const path of ['time/projects', 'time/worktypes', 'users']) {
    const meta = await owner.get(`${path}/$metadata`)
    t.match(
      meta.json.fields.find((field: { name: string }) => field.name === 'trashItem'),
      { access: 'READ_WRITE' },
      `${path}: trashItem is read-write`,
    )
  }
  const id = await owner.create('time/worktypes', { name: 'trash-field', trashItem: null })
  const got = (await owner.get(`time/worktypes/${id}`)).json
  t.equal(got.trashItem, null)
  t.equal((await owner.put(`time/worktypes/${id}`, got)).status, 200, "a GET's body PUT back as it is")
  const trashed = await owner.create('time/worktypes', { name: 'trashed' })
  const itemId = (await owner.del(`time/worktypes/${trashed}`)).json.trashItem.id as string
  for (const [label, answer] of [
    ['POST', await owner.post('time/worktypes', { name: 'x', trashItem: { id: itemId } })],
    ['PUT', await owner.put(`time/worktypes/${id}`, { trashItem: { id: itemId } })],
    ['$set', await owner.post(`time/worktypes/${id}/$set`, undefined, { trashItem: itemId })],
  ] as const) {
    t.equal(answer.status, 400, `${label}: 400`)
    t.match(answer.json, { code: 'TL01-1103', message: /DELETE/ }, `${label}: says to use DELETE`)
  }
  t.equal((await owner.get(`time/worktypes/${id}`)).json.trashItem, null, 'nothing changed')
})
