/*
 * splitPath: the path below /v1 as decoded segments. One or two leading
 * slashes and any trailing ones are not segments; `%` escapes are decoded
 * per segment; a `.json` ending is the JSONP suffix; `.`, `..`, bad
 * escapes and overlong segments are refused with PathError.
 */
import t from 'tap'
import { PathError, splitPath } from '../src/http/request.js'

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
