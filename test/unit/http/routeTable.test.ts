/*
 * matchPattern: a path matches a pattern segment by segment, `:name`
 * capturing one segment; a different length or literal is no match, and
 * every route of the table matches a path made from its own pattern.
 * matchingRoutes (what the router asks) finds, for such paths and for
 * others, exactly the routes of the scope that matchPattern accepts, in
 * table order.
 */
import t from 'tap'
import { matchPattern } from '../../../src/http/pathPattern.js'
import { matchingRoutes, ROUTES } from '../../../src/http/routeTable.js'

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

t.test('matchingRoutes finds what a scan of the whole table finds', async (t) => {
  const paths = ROUTES.map((route) => route.pattern.split('/').map((part) => (part.startsWith(':') ? 'x' : part)))
  paths.push([], ['projects'], ['projects', 'p1'], ['storage'], ['storage', 'g'], ['users', 'u1', 'signature'], ['auth', 'confirm', 'c', 'd'])
  let found = 0
  for (const segments of paths) {
    for (const scope of ['public', 'tenant'] as const) {
      const scanned = ROUTES.filter((route) => route.scope === scope && matchPattern(route.pattern, segments) !== null)
      const matches = matchingRoutes(scope, segments)
      t.same(
        matches.map((match) => match.route),
        scanned,
        `${scope} /${segments.join('/')}`,
      )
      for (const match of matches) t.same(match.params, matchPattern(match.route.pattern, segments))
      found += matches.length
    }
  }
  t.ok(found >= ROUTES.length, 'every route was found at least once')
})
