/*
 * An import (domain/operations/importTimeRecords.ts), run directly on a
 * WriteTx as its steps: each row becomes a time record of its user; the
 * clients, projects and tags the rows name are matched by name without
 * regard to case or spaces (the caller's visible, live ones) or made once;
 * a project name several clients share needs the row's client; an unknown
 * user is refused with the line (or given to the caller with
 * unknown_users=self), and a refusal writes nothing; too many rows are
 * refused; a dry run decides it all and then throws its outcome, leaving
 * the state as it was.
 */
import t from 'tap'
import { createObject } from '../../../src/domain/operations/createObject.js'
import { deleteObject } from '../../../src/domain/operations/deleteObject.js'
import { ImportPreview, importTimeRecords, previewImport, type ImportInput, type UnknownUsers } from '../../../src/domain/operations/importTimeRecords.js'
import { planColumns } from '../../../src/domain/imports/importLayouts.js'
import { Client } from '../../../src/domain/resources/client.js'
import { Project } from '../../../src/domain/resources/project.js'
import type { Rec } from '../../../src/domain/schema.js'
import { addUser, codeOf, domainTenant, type DomainTenant } from '../../helpers/domainState.js'

const HEADER = ['Email', 'Client', 'Project', 'Tags', 'Start date', 'Start time', 'Duration']

/** The import of `rows` (cells under HEADER) as a toggl file. */
function input(rows: readonly (readonly string[])[], more: { unknownUsers?: UnknownUsers; maxRows?: number; previewRows?: number } = {}): ImportInput {
  const unknownUsers = more.unknownUsers ?? 'refuse'
  return {
    plan: planColumns('toggl', HEADER, new Map(), unknownUsers === 'self'),
    lines: rows.map((cells, index) => ({ line: index + 2, cells })),
    timeZone: 'UTC',
    values: { dateFormat: null, durationUnit: 'hours', tagSeparator: ',' },
    unknownUsers,
    previewRows: more.previewRows ?? 0,
    maxRows: more.maxRows ?? 100,
  }
}

/** Runs the steps of a write in slices to its end, as tenants/slicedWrite.ts does. */
function ran<T>(steps: Generator<void, T, void>): T {
  for (;;) {
    const next = steps.next()
    if (next.done === true) return next.value
  }
}

function records(tenant: DomainTenant): Rec[] {
  return [...tenant.state.collection('TimeRecord').values()]
}

t.test('rows become time records; named objects matched without regard to case, or made once', async (t) => {
  const tenant = domainTenant()
  const { state, owner, write } = tenant
  const bob = addUser(tenant, 'bob@acme.test')
  const globex = write((tx) => createObject(tx, owner, Client, { name: 'Globex' }))
  const outcome = write((tx) =>
    ran(
      importTimeRecords(
        tx,
        owner,
        input([
          ['BOB@acme.test', ' globex ', 'Launch', 'urgent, web', '2025-03-07', '09:00', '1:30:00'],
          ['olga@acme.test', 'Globex', 'launch', 'web', '2025-03-07', '11:00', '2:00:00'],
          ['bob@acme.test', 'Initech', 'Launch', '', '2025-03-08', '09:00', '0:30:00'],
        ]),
      ),
    ),
  )
  t.same(
    [outcome.rows, outcome.created, outcome.matched, outcome.users, outcome.assignedToCaller, outcome.timeZone],
    [3, { clients: 1, projects: 2, tasks: 0, tags: 2, timeRecords: 3 }, { clients: 1, projects: 0, tasks: 0, tags: 0 }, 2, 0, 'UTC'],
  )
  const made = records(tenant).sort((a, b) => (a.start as number) - (b.start as number))
  t.same(
    made.map((rec) => [rec.user, rec.start, rec.duration]),
    [
      [bob.userId, Date.UTC(2025, 2, 7, 9), 90 * 60_000],
      [owner.userId, Date.UTC(2025, 2, 7, 11), 120 * 60_000],
      [bob.userId, Date.UTC(2025, 2, 8, 9), 30 * 60_000],
    ],
  )
  t.equal(made[0]?.client, globex.id, 'the existing client, matched')
  t.equal(made[0]?.project, made[1]?.project, 'one project Launch of Globex, made once')
  t.not(made[2]?.project, made[0]?.project, 'Launch of Initech is another project')
  t.equal((state.get('Project', made[2]?.project as string) as Rec).client, made[2]?.client)
  t.equal(state.collection('Tag').size, 2)
})

t.test('refusals: an unknown user with its line, too many rows, an ambiguous project; nothing written', async (t) => {
  const tenant = domainTenant()
  const { state, owner, write } = tenant
  const row = (email: string, client = '', project = '') => [email, client, project, '', '2025-03-07', '09:00', '1:00:00']
  try {
    write((tx) => ran(importTimeRecords(tx, owner, input([row('olga@acme.test', 'Globex'), row('nobody@acme.test')]))))
    t.fail('refused')
  } catch (error) {
    t.match(error, { code: 'TL01-1105', message: /^line 3, column 'Email': no user 'nobody@acme.test'/ })
  }
  t.same([records(tenant).length, state.collection('Client').size], [0, 0], 'not even the first row’s client')
  t.equal(
    codeOf(() => write((tx) => ran(importTimeRecords(tx, owner, input([row('olga@acme.test'), row('olga@acme.test')], { maxRows: 1 }))))),
    'TL01-9002',
  )
  const a = write((tx) => createObject(tx, owner, Client, { name: 'A' }))
  const b = write((tx) => createObject(tx, owner, Client, { name: 'B' }))
  write((tx) => createObject(tx, owner, Project, { name: 'Shared', client: a.id }))
  write((tx) => createObject(tx, owner, Project, { name: 'Shared', client: b.id }))
  t.equal(
    codeOf(() => write((tx) => ran(importTimeRecords(tx, owner, input([row('olga@acme.test', '', 'Shared')]))))),
    'TL01-1105',
    'two clients’ projects share the name',
  )
  const outcome = write((tx) => ran(importTimeRecords(tx, owner, input([row('olga@acme.test', 'b', 'shared')]))))
  t.same(outcome.matched, { clients: 1, projects: 1, tasks: 0, tags: 0 }, 'with its client it is found')
  t.equal(records(tenant)[0]?.client, b.id)
})

t.test('unknown_users=self: such rows are the caller’s; trashed objects are not matched', async (t) => {
  const tenant = domainTenant()
  const { owner, write } = tenant
  const old = write((tx) => createObject(tx, owner, Client, { name: 'Globex' }))
  write((tx) => deleteObject(tx, owner, Client, old.id, false))
  const outcome = write((tx) => ran(importTimeRecords(tx, owner, input([['nobody@acme.test', 'Globex', '', '', '2025-03-07', '09:00', '1:00:00']], { unknownUsers: 'self' }))))
  t.same([outcome.assignedToCaller, outcome.created.clients, outcome.matched.clients], [1, 1, 0])
  const made = records(tenant)[0] as Rec
  t.equal(made.user, owner.userId)
  t.not(made.client, old.id, 'a new Globex, not the one in the trash')
})

t.test('a plain user may not import another user’s rows', async (t) => {
  const tenant = domainTenant()
  const bob = addUser(tenant, 'bob@acme.test')
  const code = codeOf(() => tenant.write((tx) => ran(importTimeRecords(tx, bob, input([['olga@acme.test', '', '', '', '2025-03-07', '09:00', '1:00:00']])))))
  t.equal(code, 'TL01-1008')
  t.equal(records(tenant).length, 0)
})

t.test('a dry run: the outcome thrown with its preview, the state as it was', async (t) => {
  const tenant = domainTenant()
  const { state, owner, write } = tenant
  const rows = [
    ['olga@acme.test', 'Globex', 'Launch', 'web', '2025-03-07', '09:00', '1:00:00'],
    ['olga@acme.test', 'Globex', 'Launch', '', '2025-03-07', '10:00', '1:00:00'],
  ]
  let preview: ImportPreview | undefined
  try {
    write((tx) => ran(previewImport(tx, owner, input(rows, { previewRows: 1 }))))
  } catch (error) {
    if (error instanceof ImportPreview) preview = error
    else throw error
  }
  t.ok(preview, 'the outcome is thrown')
  t.same(preview?.outcome.created, { clients: 1, projects: 1, tasks: 0, tags: 1, timeRecords: 2 })
  t.equal(preview?.outcome.preview.length, 1, 'as many rows shown as asked')
  t.match(preview?.outcome.preview[0], {
    line: 2,
    user: { id: owner.userId, email: 'olga@acme.test' },
    client: { name: 'Globex', existing: false },
    tags: [{ name: 'web', existing: false }],
    start: Date.UTC(2025, 2, 7, 9),
  })
  t.same([records(tenant).length, state.collection('Client').size, state.collection('Tag').size], [0, 0, 0], 'nothing kept')
})
