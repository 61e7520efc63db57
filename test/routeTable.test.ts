/*
 * matchPattern: a path matches a pattern segment by segment, `:name`
 * capturing one segment; a different length or literal is no match, and
 * every route of the table matches a path made from its own pattern.
 */
import t from 'tap'
import { matchPattern, ROUTES } from '../src/http/routeTable.js'

t.test('literals must be equal, captures take any one segment', async (t) => {
  t.same(matchPattern('storage/:group/:key', ['storage', 'g1', 'k1']), { group: 'g1', key: 'k1' })
  t.same(matchPattern('batch', ['batch']), {})
  t.same(matchPattern('users/@self/secretkeys/:id', ['users', '@self', 'secretkeys', 'abc']), { id: 'abc' })
  t.equal(matchPattern('storage/:group/:key', ['storage', 'g1']), null, 'too short')
  t.equal(matchPattern('storage/:group/:key', ['storage', 'g1', 'k1', 'x']), null, 'too long')
  t.equal(matchPattern('users/:id/signature', ['users', 'u1', 'logo']), null, 'a literal differs at the end')
  t.equal(matchPattern('auth/confirm/:id', ['auth', 'confirmx', 'c1']), null, 'a literal differs in the middle')
  t.same(matchPattern('storage/:group/:key', ['storage', '', '']), { group: '', key: '' }, 'an empty segment is still a segment')
})

t.test('every route matches a path made from its own pattern', async (t) => {
  for (const route of ROUTES) {
    const parts = route.pattern.split('/')
    const segments = parts.map((part) => (part.startsWith(':') ? `value-of-${part.slice(1)}` : part))
    const expected = Object.fromEntries(parts.filter((part) => part.startsWith(':')).map((part) => [part.slice(1), `value-of-${part.slice(1)}`]))
    t.same(matchPattern(route.pattern, segments), expected, `${route.method} ${route.pattern}`)
  }
})
