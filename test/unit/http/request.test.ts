/*
 * What the front end reads from a request line and its Host header.
 *
 * splitPath: the path below /v1 as decoded segments. One or two leading
 * slashes and any trailing ones are not segments; `%` escapes are decoded
 * per segment; a `.json` ending is the JSONP suffix; `.`, `..`, bad
 * escapes and overlong segments are refused with PathError.
 *
 * parseQuery: the parameters as URLSearchParams reads them (`+` a space,
 * escapes decoded, bad escapes and bytes that are no UTF-8 kept or
 * replaced as it does), the first of each name kept: checked against
 * URLSearchParams itself on chosen and on random query strings; so is
 * the name of one raw part (queryPartName: what a Link leaves out).
 *
 * tenantFromHost: the tenant is the one label before the base domain, the
 * port and a trailing dot left out, case folded; the base domain itself or
 * an address names no tenant (null); any other host is not served
 * (undefined).
 */
import t from 'tap'
import { parseQuery, PathError, queryPartName, splitPath, tenantFromHost } from '../../../src/http/request.js'

t.test('segments, version and suffix', async (t) => {
  t.same(splitPath('/v1/time/projects/p1'), { segments: ['time', 'projects', 'p1'], jsonpSuffix: false, versioned: true })
  t.same(splitPath('//v1/time/'), { segments: ['time'], jsonpSuffix: false, versioned: true }, 'two leading slashes, a trailing one')
  t.same(splitPath('/v1/a//b'), { segments: ['a', '', 'b'], jsonpSuffix: false, versioned: true }, 'an empty segment inside stays')
  t.same(splitPath('/v2/a'), { segments: ['v2', 'a'], jsonpSuffix: false, versioned: false })
  t.same(splitPath('/'), { segments: [], jsonpSuffix: false, versioned: false })
  t.same(splitPath('/v1/users/@self.json'), { segments: ['users', '@self'], jsonpSuffix: true, versioned: true })
  t.same(splitPath('/v1/storage/a%2Fb/k%20y'), { segments: ['storage', 'a/b', 'k y'], jsonpSuffix: false, versioned: true }, 'escapes decode per segment')
})

t.test('malformed paths are refused', async (t) => {
  for (const path of ['/v1/a/../b', '/v1/./a', '/v1/a/..json', '/v1/a%zz', `/v1/${'x'.repeat(1025)}`]) {
    let thrown: unknown
    try {
      splitPath(path)
    } catch (error) {
      thrown = error
    }
    t.ok(thrown instanceof PathError, path.slice(0, 40))
  }
  t.same(splitPath(`/v1/${'x'.repeat(1024)}`).segments.length, 1, 'a segment of 1024 characters is allowed')
})

t.test('the tenant a host names', async (t) => {
  const cases: [string, string | null | undefined][] = [
    ['acme.localhost:8080', 'acme'],
    ['ACME.LocalHost', 'acme'],
    ['acme.localhost.', 'acme'],
    ['acme.localhost.:80', 'acme'],
    ['localhost:8080', null],
    ['127.0.0.1:8080', null],
    ['[::1]:8080', null],
    ['[::1]', null],
    ['', null],
    ['a.b.localhost', undefined],
    ['acme.example.com', undefined],
    ['acme.localhost:', undefined],
    ['acme.localhost:80x', undefined],
  ]
  for (const [host, tenant] of cases) t.equal(tenantFromHost(host, 'localhost'), tenant, host)
})

/** What URLSearchParams makes of a query, the first of each name kept (what parseQuery promises). */
function firstOfEach(queryString: string): [string, string][] {
  const kept = new Map<string, string>()
  for (const [name, value] of new URLSearchParams(queryString)) if (!kept.has(name)) kept.set(name, value)
  return [...kept]
}

t.test('the query read as URLSearchParams reads it', async (t) => {
  const chosen = [
    '',
    'token=abc&$top=100',
    '%24filter=project%2Fid+eq+%27p1%27&%24orderby=start+desc&%24top=100&no_expand=true&token=x',
    'a=1&a=2&b',
    '&&a=&=b&c==d&',
    'q=%E2%82%AC+%2B+a%2Bb',
    'bad=%zz&half=%E2%82&lone=%ED%A0%80&end=%',
    'name%3Dx=y%26z',
    'emoji=\u{1F600}&lone=\uD800x&low=\uDC00',
    'plus+name=plus+value',
    '%EF%BB%BFbom=1',
  ]
  for (const query of chosen) t.same([...parseQuery(query)], firstOfEach(query), JSON.stringify(query))
  const alphabet = ['a', 'b', '=', '&', '+', '%', '2', '4', 'F', 'e', '%41', '%2B', '%3D', '%26', '%E2%82%AC', '%C3', '%FF', '\u00e9', '\uD83D', '\uDE00', ' ', '$']
  let seed = 12345
  const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648)
  for (let round = 0; round < 5000; round += 1) {
    let query = ''
    const length = next() % 24
    for (let index = 0; index < length; index += 1) query += alphabet[next() % alphabet.length]
    const got = [...parseQuery(query)]
    const expected = firstOfEach(query)
    if (JSON.stringify(got) !== JSON.stringify(expected)) {
      t.same(got, expected, JSON.stringify(query))
      return
    }
    for (const part of query.split('&')) {
      if (part === '') continue
      const name = new URLSearchParams(part).keys().next().value
      if (queryPartName(part) !== name) {
        t.equal(queryPartName(part), name, `the name of ${JSON.stringify(part)}`)
        return
      }
    }
  }
  t.pass('5000 random query strings read alike, and the names of their parts')
})
