/*
 * Who gets a change's event (src/domain/changes.ts, audience.ts,
 * policy.ts audienceOf), without HTTP: an audience admits exactly the
 * callers canSee lets see the record, for records of every kind of rule
 * (shared and personal projects and what belongs to them, own records,
 * superuser-only records, trash items of each); the feed narrows a user's
 * own records (secret keys) to that user; a removal is logged with the
 * audience the record had just before, even when the write removed what
 * decided it first; and a removal logged by an older build (format 2,
 * without it) still decodes and is judged by its type alone: only to
 * callers who see every record of the resource.
 */
import t from 'tap'
import { admits, audienceText } from '../../../src/domain/audience.js'
import type { Caller } from '../../../src/domain/caller.js'
import { changeVisibleTo, eventAudienceOf } from '../../../src/domain/changes.js'
import { audienceOf, canSee } from '../../../src/domain/policy.js'
import { buildRecord } from '../../../src/domain/recordMaking.js'
import { RESOURCES, resourceByType } from '../../../src/domain/resources/index.js'
import type { Rec } from '../../../src/domain/schema.js'
import { changesOfEntry } from '../../../src/engine/changesOfEntry.js'
import { LOG_ENTRY_FORMAT, type LoggedEntry } from '../../../src/engine/logEntry.js'
import { decodeLogEntry, encodeLogEntry, encodePlain } from '../../../src/persist/codec.js'
import { domainTenant, NOW } from '../../helpers/domainState.js'

const { state, owner, write } = domainTenant()
const callers: Record<string, Caller> = {
  owner: { userId: owner.userId, superuser: true },
  admin: { userId: 'admin-ada', superuser: true },
  bob: { userId: 'user-bob', superuser: false },
  carol: { userId: 'user-carol', superuser: false },
}

const put = (type: string, values: Record<string, unknown>): Rec => {
  const rec = buildRecord(resourceByType(type), values, NOW)
  write((tx) => tx.put(type, rec))
  return rec
}
const shared = put('Project', { name: 'Shared' })
const bobsOwn = put('Project', { name: "Bob's own", personal: true, owner: 'user-bob' })
const adasOwn = put('Project', { name: "Ada's own", personal: true, owner: 'admin-ada' })
const records: [string, Rec][] = [
  ['Project', shared],
  ['Project', bobsOwn],
  ['Project', adasOwn],
  ['Task', put('Task', { name: 'shared task', project: shared.id })],
  ['Task', put('Task', { name: "bob's task", project: bobsOwn.id })],
  ['TimeRecord', put('TimeRecord', { user: 'user-carol', project: adasOwn.id, start: NOW, duration: 1 })],
  ['TimeRecord', put('TimeRecord', { user: 'user-carol', project: shared.id, start: NOW, duration: 1 })],
  ['SecretKey', put('SecretKey', { name: 'CI', user: 'user-bob' })],
  ['Webhook', put('Webhook', { url: 'https://example.com/', user: owner.userId })],
  ['Client', put('Client', { name: 'Initech' })],
]
for (const [type, rec] of [...records]) {
  records.push(['TrashItem', put('TrashItem', { deletedObjectId: rec.id, deletedObjectType: type, groupId: rec.id })])
}

t.test('an audience admits exactly whom canSee lets see the record', async (t) => {
  for (const [type, rec] of records) {
    const decl = resourceByType(type)
    for (const [name, caller] of Object.entries(callers)) {
      t.equal(admits(audienceOf(decl, rec, state), caller), canSee(caller, decl, rec, state), `${type} ${String(rec.name ?? rec.deletedObjectType)}: ${name}`)
    }
  }
})

t.test('no resource that only some read belongs to projects (the audiences of both rules meet only there)', async (t) => {
  const both = RESOURCES.filter((decl) => decl.readRule !== 'everyone' && decl.fieldsByName.get('project')?.ref === 'Project')
  t.same(
    both.map((decl) => decl.type),
    [],
  )
})

t.test("the feed gives a user's own records to that user alone", async (t) => {
  const [, key] = records.find(([type]) => type === 'SecretKey') as [string, Rec]
  const audience = eventAudienceOf(resourceByType('SecretKey'), key, state)
  t.same(
    Object.entries(callers)
      .filter(([, caller]) => admits(audience, caller))
      .map(([name]) => name),
    ['bob'],
  )
  const [, keysTrashItem] = records.find(([type, rec]) => type === 'TrashItem' && rec.deletedObjectId === key.id) as [string, Rec]
  t.same(
    Object.entries(callers)
      .filter(([, caller]) => admits(eventAudienceOf(resourceByType('TrashItem'), keysTrashItem, state), caller))
      .map(([name]) => name),
    ['bob'],
    'and its trash item',
  )
  const privateEntry = buildRecord(resourceByType('StorageEntry'), { group: 'g', itemKey: 'k', publicScope: false, owner: 'user-carol', contentType: 'text/plain', content: 'x' }, NOW)
  t.same(audienceText(eventAudienceOf(resourceByType('StorageEntry'), privateEntry, state)), 'user:user-carol', 'a private storage entry: its owner')
  t.same(audienceText(eventAudienceOf(resourceByType('StorageEntry'), { ...privateEntry, publicScope: true, owner: null }, state)), 'all', 'a public one: everyone')
})

/** Who gets the removed events of an entry (names of callers per removed type). */
function removalsSeen(entry: LoggedEntry): Record<string, string[]> {
  const seen: Record<string, string[]> = {}
  for (const change of changesOfEntry(9, entry)) {
    seen[change.decl.type] = Object.entries(callers)
      .filter(([, caller]) => changeVisibleTo(caller, change, state))
      .map(([name]) => name)
  }
  return seen
}

t.test('a removal is logged with who could see the record just before, even when what decided it went first', async (t) => {
  const { state: ownState, write: ownWrite } = domainTenant()
  const project = buildRecord(resourceByType('Project'), { name: "Bob's", personal: true, owner: 'user-bob' }, NOW)
  const task = buildRecord(resourceByType('Task'), { name: 'in it', project: project.id }, NOW)
  const client = buildRecord(resourceByType('Client'), { name: 'Initech' }, NOW)
  const item = buildRecord(resourceByType('TrashItem'), { deletedObjectId: task.id, deletedObjectType: 'Task', groupId: task.id }, NOW)
  ownWrite((tx) => {
    for (const [type, rec] of [
      ['Project', project],
      ['Task', task],
      ['Client', client],
      ['TrashItem', item],
    ] as const)
      tx.put(type, rec)
  })
  const ops = ownWrite((tx) => {
    // The project first, then what belongs to it and the trash item of that: each judged as it was before the write.
    tx.del('Project', project.id)
    tx.del('Task', task.id)
    tx.del('TrashItem', item.id)
    tx.del('Client', client.id)
    return tx.ops
  })
  t.same(
    ops.map((op) => (op.op === 'del' ? op.seenBy : null)),
    ['user:user-bob', 'user:user-bob', 'user:user-bob', 'all'],
  )
  t.equal(ownState.get('Task', task.id), undefined)
  const logged = decodeLogEntry(encodeLogEntry({ v: LOG_ENTRY_FORMAT, at: NOW, ops }))
  t.same(
    changesOfEntry(4, logged).map((change) => [
      change.decl.type,
      Object.entries(callers)
        .filter(([, caller]) => changeVisibleTo(caller, change, ownState))
        .map(([name]) => name),
    ]),
    [
      ['Project', ['bob']],
      ['Task', ['bob']],
      ['TrashItem', ['bob']],
      ['Client', ['owner', 'admin', 'bob', 'carol']],
    ],
    'read back from the log, each removal reaches whom it says',
  )
  const rolledBack = ownWrite((tx) => {
    tx.put('Client', { ...client, id: 'c2' })
    const savepoint = tx.savepoint()
    tx.del('Client', 'c2')
    tx.rollbackTo(savepoint)
    return tx.ops.length
  })
  t.equal(rolledBack, 1, 'a removal rolled back is not logged')
})

t.test('a removal logged by an older build (format 2, no audience) decodes and is judged by its type alone', async (t) => {
  const types = ['Client', 'Tag', 'Project', 'Task', 'TimeRecord', 'TrashItem', 'SecretKey', 'StorageEntry', 'Webhook']
  // As format 2 wrote it: [2, at, ops], each removal ['del', type, id].
  const old = decodeLogEntry(encodePlain([2, NOW, types.map((type) => ['del', type, `${type}-1`])]))
  t.same(
    removalsSeen(old),
    {
      Client: ['owner', 'admin', 'bob', 'carol'],
      Tag: ['owner', 'admin', 'bob', 'carol'],
      Project: [],
      Task: [],
      TimeRecord: [],
      TrashItem: [],
      SecretKey: [],
      StorageEntry: [],
    },
    'only to callers who see every record of the type (webhooks: never events)',
  )
  const unreadable = decodeLogEntry(encodePlain([3, NOW, [['del', 'TimeRecord', 'r-1', 'a text of a newer build']]]))
  t.same(removalsSeen(unreadable), { TimeRecord: [] }, 'an audience this build cannot read counts as unknown')
  const readable = decodeLogEntry(encodePlain([3, NOW, [['del', 'TimeRecord', 'r-1', 'all']]]))
  t.same(removalsSeen(readable), { TimeRecord: ['owner', 'admin', 'bob', 'carol'] }, 'one it reads is followed')
})
