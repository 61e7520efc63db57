/*
 * The tenant a request's address names (http/tenantAddress.ts): by host,
 * or on the public address by path (`/tenant/<name>/v1/…`), the name case
 * folded like a host name and kept as the address prefix; a name that
 * cannot be a tenant's names none; a tenant's own host never reads the path.
 */
import t from 'tap'
import { tenantAddressOf } from '../../../src/http/tenantAddress.js'

t.test('by host, the path is left as it is', async (t) => {
  t.same(tenantAddressOf('acme.localhost:8080', '/v1/time/projects', 'localhost'), { tenant: 'acme', prefix: '', path: '/v1/time/projects' })
  t.same(tenantAddressOf('ACME.LOCALHOST', '/v1/x', 'localhost'), { tenant: 'acme', prefix: '', path: '/v1/x' }, 'host names are case-insensitive')
  t.same(tenantAddressOf('acme.localhost', '/tenant/other/v1/x', 'localhost'), { tenant: 'acme', prefix: '', path: '/tenant/other/v1/x' }, "a tenant's host does not read the path form")
  t.same(tenantAddressOf('evil.example', '/tenant/acme/v1/x', 'localhost'), { tenant: undefined, prefix: '', path: '/tenant/acme/v1/x' }, 'a host not served stays not served')
})

t.test('by path on the public address', async (t) => {
  t.same(tenantAddressOf('localhost:8080', '/tenant/acme/v1/time/projects', 'localhost'), { tenant: 'acme', prefix: '/tenant/acme', path: '/v1/time/projects' })
  t.same(tenantAddressOf('127.0.0.1:8080', '/tenant/Acme-2/v1', 'localhost'), { tenant: 'acme-2', prefix: '/tenant/acme-2', path: '/v1' }, 'case folded')
  t.same(tenantAddressOf('', '/tenant/%61cme/v1/x', 'localhost'), { tenant: 'acme', prefix: '/tenant/acme', path: '/v1/x' }, 'escapes decoded, the prefix written plainly')
  t.same(tenantAddressOf('localhost', '/tenant/acme', 'localhost'), { tenant: 'acme', prefix: '/tenant/acme', path: '' }, 'no path below: not /v1 (404)')
  t.same(tenantAddressOf('localhost', '/v1/register/signup', 'localhost'), { tenant: null, prefix: '', path: '/v1/register/signup' }, 'the public address itself')
})

t.test('a name that cannot be a tenant names none', async (t) => {
  for (const name of ['', 'a.b', 'a%2fb', '%zz', 'a_b', '..', `${'x'.repeat(64)}`, 'a%5cb']) {
    t.equal(tenantAddressOf('localhost', `/tenant/${name}/v1/x`, 'localhost').tenant, undefined, `'${name.slice(0, 20)}'`)
  }
  t.equal(tenantAddressOf('localhost', `/tenant/${'x'.repeat(63)}/v1/x`, 'localhost').tenant, 'x'.repeat(63), 'one DNS label of 63 characters is a name')
})
