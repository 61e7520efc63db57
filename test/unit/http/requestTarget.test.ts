/*
 * What a forward to another node sends (http/requestTarget.ts): the
 * address prefix, /v1 and the router's segments, each encoded again, and
 * the query (as received when it can go on a request line). Whatever the client's path held (`\`, `..` and its
 * escapes, `//`, encoded slashes, `?` and `#` in a segment), the forwarded
 * target splits back into exactly the same segments below the same
 * address, and a WHATWG URL parser (which reads `\` as `/` and resolves
 * dot segments: issue 37) finds the same path in it: nothing can leave
 * the tenant's /v1.
 */
import t from 'tap'
import { parseQuery, splitPath } from '../../../src/http/request.js'
import { encodePathSegment, forwardTarget, normalizedPath } from '../../../src/http/requestTarget.js'

const HOSTILE_PATHS = [
  '/v1/a\\..\\..\\cluster/tenants/victim/writes/confirmByEmail',
  '/v1/a%5c..%5c..%5ccluster/tenants/victim/restore',
  '/v1/a%5C%2e%2e%5C%2e%2e%5Ccluster/tenants/victim/release',
  '/v1/a%2f..%2f..%2fcluster/tenants/victim/release',
  '/v1/time//projects',
  '/v1/x%3F/y%23z/%25/@self/$metadata',
  '/v1/.%2e%2e/x',
  '/v1/%2e%2e%2e/x',
  '/v1/users/@self.json',
]

t.test('a hostile path splits back into the same segments, and no URL parser leaves /v1', async (t) => {
  for (const raw of HOSTILE_PATHS) {
    const split = splitPath(raw)
    for (const prefix of ['', '/tenant/acme']) {
      const rawQuery = 'token=t&$filter=a%20eq%201'
      const request = { addressPrefix: prefix, segments: split.segments, jsonpSuffix: split.jsonpSuffix, query: parseQuery(rawQuery), rawQuery }
      const target = forwardTarget(request)
      const [path, query] = target.split('?') as [string, string]
      t.ok(path.startsWith(`${prefix}/v1`), `${raw}: starts with ${prefix}/v1`)
      t.notMatch(path, /\\/, 'no backslash is left as it is')
      const again = splitPath(path.slice(prefix.length))
      t.same(again.segments, split.segments, `${raw}: the same segments`)
      t.equal(again.jsonpSuffix, split.jsonpSuffix)
      t.equal(query, rawQuery, 'the query as received')
      const resolved = new URL(target, 'http://node.internal:1')
      t.ok(resolved.pathname.startsWith(`${prefix}/v1`), `${raw}: even a URL parser stays below ${prefix}/v1 (${resolved.pathname})`)
      t.notOk(resolved.pathname.includes('/cluster/') && !target.includes('/cluster/'), 'no /cluster/ appears')
      t.equal(resolved.pathname, path, 'the URL parser changes nothing of it')
    }
  }
})

t.test('segments are encoded only where they must be', async (t) => {
  t.equal(encodePathSegment('@self'), '@self')
  t.equal(encodePathSegment('$metadata'), '$metadata')
  t.equal(encodePathSegment('a/b'), 'a%2Fb')
  t.equal(encodePathSegment('a\\b'), 'a%5Cb')
  t.equal(encodePathSegment('50%'), '50%25')
  t.equal(encodePathSegment('k y?#'), 'k%20y%3F%23')
  t.equal(normalizedPath({ addressPrefix: null, segments: ['time', 'projects'], jsonpSuffix: false }), '/v1/time/projects', 'no prefix: /v1')
  t.equal(normalizedPath({ addressPrefix: '/tenant/acme', segments: [], jsonpSuffix: false }), '/tenant/acme/v1')
})

t.test('a query that cannot go on a request line as it came is sent as parsed', async (t) => {
  const rawQuery = 'name=caf\u00e9\u4e2d&x=a b'
  const target = forwardTarget({ addressPrefix: '', segments: ['time', 'projects'], jsonpSuffix: false, query: parseQuery(rawQuery), rawQuery })
  t.match(target, /^\/v1\/time\/projects\?[\x21-\x7e]+$/, 'printable ASCII only')
  t.same([...parseQuery(target.slice(target.indexOf('?') + 1))], [...parseQuery(rawQuery)], 'the same parameters')
})
