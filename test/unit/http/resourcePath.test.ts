/*
 * The resource routes' path parser (src/http/routes/resourcePath.ts): what
 * each shape of path below a resource path names, without a server.
 */
import t from 'tap'
import { resourceByType } from '../../../src/domain/resources/index.js'
import { parseCollectionPath } from '../../../src/http/routes/resourcePath.js'

const User = resourceByType('User')
const inner = User.inner[0]
if (inner === undefined) throw new Error('the test needs a User inner collection')

t.test('a collection, its operations, summary and views', async (t) => {
  t.same(parseCollectionPath(User, [], 0), { kind: 'collection' })
  t.same(parseCollectionPath(User, ['$count'], 0), { kind: 'operation', name: '$count' })
  t.same(parseCollectionPath(User, ['summary'], 0), { kind: 'summary' })
  t.same(parseCollectionPath(User, ['@deleted'], 0), { kind: 'view', name: '@deleted', tail: 'list' })
  t.same(parseCollectionPath(User, ['@active', 'summary'], 0), { kind: 'view', name: '@active', tail: 'summary' })
  t.same(parseCollectionPath(User, ['@active', '$count'], 0), { kind: 'view', name: '@active', tail: '$count' })
})

t.test('an object, by id or by its alias, and what is below it', async (t) => {
  t.same(parseCollectionPath(User, ['u1'], 0), { kind: 'object', id: 'u1', alias: false })
  t.same(parseCollectionPath(User, ['@self'], 0), { kind: 'object', id: '@self', alias: true })
  t.same(parseCollectionPath(User, ['@self', '$history'], 0), { kind: 'history', id: '@self', alias: true })
  t.same(parseCollectionPath(User, ['summary', '@deleted'], 0), { kind: 'trashedObject', id: 'summary', alias: false }, 'summary with more is an id')
  t.same(parseCollectionPath(User, ['$x', '$set'], 0), { kind: 'set', id: '$x', alias: false }, 'an operation name with more is an id')
  t.same(
    parseCollectionPath(User, ['@active', 'summary', 'more'], 0),
    { kind: 'noSuchPath', id: '@active', alias: false, message: 'no resource at this path', underTrash: false },
    'a view name with a long tail is an id',
  )
  t.same(parseCollectionPath(User, ['u1', '$lock'], 0), { kind: 'action', id: 'u1', alias: false, name: '$lock' })
})

t.test('an inner collection goes on from where its own path starts; a path naming nothing says why', async (t) => {
  const segments = ['u1', inner.name, 'p1', '$history']
  const target = parseCollectionPath(User, segments, 0)
  t.same(target, { kind: 'inner', id: 'u1', alias: false, inner, segments, from: 2 })
  t.same(parseCollectionPath(resourceByType(inner.childType), segments, 2), { kind: 'history', id: 'p1', alias: false })
  t.same(parseCollectionPath(User, ['u1', 'nothing'], 0), { kind: 'noSuchPath', id: 'u1', alias: false, message: `${User.path ?? 'User'} has no inner collection 'nothing'`, underTrash: false })
  t.same(parseCollectionPath(User, ['u1', '@deleted', 'x'], 0), { kind: 'noSuchPath', id: 'u1', alias: false, message: 'no resource at this path', underTrash: true })
})
