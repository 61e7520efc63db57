/*
 * What the front end reads from a request line and its Host header.
 *
 * splitPath: the path below /v1 as decoded segments. One or two leading
 * slashes and any trailing ones are not segments; `%` escapes are decoded
 * per segment; a `.json` ending is the JSONP suffix; `.`, `..`, bad
 * escapes and overlong segments are refused with PathError.
 *
 * tenantFromHost: the tenant is the one label before the base domain, the
 * port and a trailing dot left out, case folded; the base domain itself or
 * an address names no tenant (null); any other host is not served
 * (undefined).
 */
import t from 'tap'
import { PathError, splitPath, tenantFromHost } from '../../../src/http/request.js'

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
