/*
 * Activating and deactivating a project (domain/operations/projectActivation.ts),
 * called directly: `active` changes as an update without a version does (a
 * new version, the write's time), by whoever may change the project.
 */
import t from 'tap'
import { createObject } from '../../../src/domain/operations/createObject.js'
import { setProjectActive } from '../../../src/domain/operations/projectActivation.js'
import { Project } from '../../../src/domain/resources/project.js'
import { addUser, codeOf, domainTenant, NOW } from '../../helpers/domainState.js'

t.test('deactivated and activated again, each a new version', async (t) => {
  const { state, owner, write } = domainTenant()
  const project = write((tx) => createObject(tx, owner, Project, { name: 'Launch' }))
  t.equal(project.active, true)
  const off = write((tx) => setProjectActive(tx, owner, Project, project.id, false), NOW + 1)
  t.same([off.active, off.version, off.updatedAt, off.name], [false, 2, NOW + 1, 'Launch'])
  t.equal(state.get('Project', project.id)?.active, false)
  t.same([write((tx) => setProjectActive(tx, owner, Project, project.id, true)).active, state.get('Project', project.id)?.version], [true, 3])
})

t.test('refused to a user who may not change the project, and for an unknown one', async (t) => {
  const tenant = domainTenant()
  const { state, owner, write } = tenant
  const bob = addUser(tenant, 'bob@acme.test')
  const project = write((tx) => createObject(tx, owner, Project, { name: 'Launch' }))
  t.equal(
    codeOf(() => write((tx) => setProjectActive(tx, bob, Project, project.id, false))),
    'TL01-1008',
  )
  t.equal(state.get('Project', project.id)?.active, true, 'unchanged')
  t.equal(
    codeOf(() => write((tx) => setProjectActive(tx, owner, Project, 'no-such-id', false))),
    'TL01-1101',
  )
})
