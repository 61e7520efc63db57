/*
 * `$metadata` and `$dummy` (issue 26 B), over HTTP: both answer at the
 * inner paths (`time/projects/{id}/members`, `…/worktypelinks`,
 * `time/clients/{id}/contacts`, `billing/bills/{id}/items`, `…/vats`,
 * `users/@self/secretkeys`), the metadata naming the inner path;
 * enumerations are types of their own named after the field with an Enum
 * constraint listing the values; Bill cascades PERSIST and MERGE to its
 * items and VAT rows; `$dummy` embeds references in full, as a GET without
 * `no_expand` does, and its displayName follows the resource's rule
 * applied to the sample's own fields.
 */
import t from 'tap'
import { api } from '../helpers/api.js'
import { startInProcess } from '../helpers/server.js'

const server = await startInProcess()
t.teardown(() => server.stop())
const { client } = server
const owner = api(client, 'docs26', (await client.createTenant('docs26')).token)
const project = await owner.create('time/projects', { name: 'Documented' })
const customer = await owner.create('time/clients', { name: 'Customer' })
const bill = await owner.create('billing/bills', { description: 'Bill' })

interface FieldDoc {
  name: string
  type: string
  constraints?: { type: string; details: string }[]
}
const fieldOf = (metadata: { fields: FieldDoc[] }, name: string): FieldDoc | undefined => metadata.fields.find((candidate) => candidate.name === name)

t.test('$metadata and $dummy at the inner paths', async (t) => {
  const inner: [string, string, string][] = [
    [`time/projects/${project}/members`, 'ProjectMember', '/v1/time/projects/{id}/members'],
    [`time/projects/${project}/worktypelinks`, 'ProjectWorkTypeLink', '/v1/time/projects/{id}/worktypelinks'],
    [`time/clients/${customer}/contacts`, 'ContactPerson', '/v1/time/clients/{id}/contacts'],
    [`billing/bills/${bill}/items`, 'BillItem', '/v1/billing/bills/{id}/items'],
    [`billing/bills/${bill}/vats`, 'BillVat', '/v1/billing/bills/{id}/vats'],
    ['users/@self/secretkeys', 'SecretKey', '/v1/users/@self/secretkeys'],
  ]
  for (const [path, type, shownPath] of inner) {
    const metadata = await owner.get(`${path}/$metadata`)
    t.equal(metadata.status, 200, `${path}/$metadata: ${metadata.text.slice(0, 200)}`)
    t.equal(metadata.json.type, type)
    t.equal(metadata.json.path, shownPath, 'the metadata names the inner path')
    t.ok(Array.isArray(metadata.json.fields) && metadata.json.fields.length > 0)
    const dummy = await owner.get(`${path}/$dummy`)
    t.equal(dummy.status, 200, `${path}/$dummy: ${dummy.text.slice(0, 200)}`)
    t.match(dummy.json, { id: /^[0-9a-f-]{36}$/, version: 1, trashItem: null })
    const xml = await owner.get(`${path}/$metadata`, { format: 'xml' })
    t.match(xml.text, new RegExp(`<type>${type}</type>`), 'and in XML')
  }
  t.equal((await owner.get('time/projects/00000000-0000-4000-8000-000000000000/members/$metadata')).status, 404, 'the parent must exist')
  t.equal((await owner.get(`time/projects/${project}/members/$nothing`)).json.code, 'TL01-9003')
})

t.test('enumerations are types of their own', async (t) => {
  const expected: [string, string, string, string][] = [
    ['time/impulses', 'mode', 'Mode', 'STOPWATCH, PAUSE'],
    ['time/worktypes', 'category', 'Category', 'WORK, BREAK'],
    ['billing/bills', 'vatMode', 'VatMode', 'DECLARE_VAT, NO_VAT'],
    ['accesses', 'product', 'Product', 'CORE, TIME, BILLING'],
  ]
  for (const [path, name, type, values] of expected) {
    const field = fieldOf((await owner.get(`${path}/$metadata`)).json, name)
    t.equal(field?.type, type, `${path} ${name} is of type ${type}`)
    t.same(
      field?.constraints?.find((constraint) => constraint.type === 'Enum'),
      { type: 'Enum', details: values },
      'the Enum constraint lists the values',
    )
  }
  t.equal(fieldOf((await owner.get('time/projects/$metadata')).json, 'name')?.type, 'String', 'other strings stay String')
})

t.test("Bill's cascades", async (t) => {
  const metadata = (await owner.get('billing/bills/$metadata')).json
  t.same(metadata.cascades, [
    { cascadeType: 'REMOVE', objectTypes: ['TrashItem', 'BillItem', 'BillVat'] },
    { cascadeType: 'PERSIST', objectTypes: ['BillItem', 'BillVat'] },
    { cascadeType: 'MERGE', objectTypes: ['BillItem', 'BillVat'] },
  ])
  t.same(
    (await owner.get('time/projects/$metadata')).json.cascades.map((cascade: { cascadeType: string }) => cascade.cascadeType),
    ['REMOVE'],
    'others only remove',
  )
})

t.test('$dummy embeds references in full and shows the display rule', async (t) => {
  const record = (await owner.get('time/timerecords/$dummy')).json
  t.type(record.user.email, 'string', 'the user is embedded in full, not a stub')
  t.type(record.user.active, 'boolean')
  t.equal(record.user.displayName, `${record.user.lastName as string} ${record.user.firstName as string}`, "the embedded user's display name by the User rule")
  t.equal(record.displayName, record.user.displayName, "a time record's display name is its user's")
  t.type(record.project.name, 'string')
  t.equal(record.project.displayName, record.project.name)
  t.match(record.project.owner, { id: /^[0-9a-f-]{36}$/, displayName: /\S/ }, "the embedded object's own references are stubs")
  t.notOk('email' in record.project.owner, 'a stub, as in a GET')

  const contact = (await owner.get(`time/clients/${customer}/contacts/$dummy`)).json
  t.equal(contact.displayName, `${contact.lastName as string} ${contact.firstName as string}`, 'ContactPerson: "lastName firstName"')
  t.type(contact.client.name, 'string')
  const projectDummy = (await owner.get('time/projects/$dummy')).json
  t.equal(projectDummy.displayName, projectDummy.name, 'Project: its name')
  t.type(projectDummy.membersCount, 'number', 'counters have sample values')
  const member = (await owner.get(`time/projects/${project}/members/$dummy`)).json
  t.equal(member.displayName, member.user.displayName, "ProjectMember: the user's display name")
  const xml = await owner.get('time/timerecords/$dummy', { format: 'xml' })
  t.match(xml.text, /<user><id>[0-9a-f-]{36}<\/id>/, 'XML embeds the user too')
})
