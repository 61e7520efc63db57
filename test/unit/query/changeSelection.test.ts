/*
 * The choice of one entry's events for many subscribers
 * (src/query/changeSelection.ts) without HTTP: each change's event is
 * rendered and its audience judged once for the whole round, however many
 * subscribers choose from it (what each adds reads nothing of the state: a
 * comparison with its caller), and each still gets exactly what its caller
 * may see.
 */
import t from 'tap'
import type { Caller } from '../../../src/domain/caller.js'
import { EventTexts } from '../../../src/domain/changes.js'
import { buildRecord } from '../../../src/domain/recordMaking.js'
import { resourceByType } from '../../../src/domain/resources/index.js'
import type { DisplayContext } from '../../../src/domain/schema.js'
import { changesOfEntry } from '../../../src/engine/changesOfEntry.js'
import { ChangeSelection } from '../../../src/query/changeSelection.js'
import { domainTenant, NOW } from '../../helpers/domainState.js'

const { state, owner, write } = domainTenant()
const bobsOwn = buildRecord(resourceByType('Project'), { name: "Bob's own", personal: true, owner: 'user-bob' }, NOW)
write((tx) => tx.put('Project', bobsOwn))
const ops = write((tx) => {
  tx.put('Project', buildRecord(resourceByType('Project'), { name: 'Shared' }, NOW))
  tx.put('Task', buildRecord(resourceByType('Task'), { name: "in Bob's own", project: bobsOwn.id }, NOW))
  tx.put('SecretKey', buildRecord(resourceByType('SecretKey'), { name: 'CI', user: 'user-carol' }, NOW))
  return tx.ops
})
const changes = changesOfEntry(7, { v: 3, at: NOW, ops })

/** The tenant's state, counting what is read of it. */
let reads = 0
const counted: DisplayContext = {
  get: (type, id) => {
    reads += 1
    return state.get(type, id)
  },
  displayNameOf: (type, id) => {
    reads += 1
    return state.displayNameOf(type, id)
  },
}

const everything = ChangeSelection.parse({})
const callers: Caller[] = [
  { userId: owner.userId, superuser: true },
  { userId: 'user-bob', superuser: false },
  { userId: 'user-carol', superuser: false },
]
for (let index = 0; index < 100; index += 1) callers.push({ userId: `user-${index}`, superuser: index % 10 === 0 })

t.test('a round renders and judges each change once, whatever the number of subscribers', async (t) => {
  const texts = new EventTexts(counted)
  const seen = (caller: Caller) => everything.choose(caller, changes, texts).map((event) => event.change.decl.type)
  t.same(seen(callers[0] as Caller), ['Project'], 'the owner: not what is in Bob’s personal project, nor Carol’s key')
  t.same(seen(callers[1] as Caller), ['Project', 'Task'], 'Bob: the shared project and the task in his own')
  t.same(seen(callers[2] as Caller), ['Project', 'SecretKey'], 'Carol: the shared project and her key')
  // Every change has been judged and every event rendered by now.
  const readsForThree = reads
  t.ok(readsForThree > 0)
  for (const caller of callers.slice(3)) t.same(seen(caller), ['Project'])
  t.equal(reads, readsForThree, 'a hundred more subscribers read nothing of the state')
  const first = everything.choose(callers[1] as Caller, changes, texts)[0]
  t.equal(first, everything.choose(callers[5] as Caller, changes, texts)[0], 'one text for all who get the event')
})
