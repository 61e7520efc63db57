/*
 * The internal listener's two credentials (http/clusterCredentials.ts,
 * http/internalAccess.ts): derived from the secret and apart from it and
 * from each other; the node credential opens /cluster/* only, the
 * forwarding credential a named tenant's /v1 only.
 */
import t from 'tap'
import { clusterCredentials, FORWARDED_CREDENTIAL_HEADER, FORWARDED_TENANT_HEADER, NODE_CREDENTIAL_HEADER } from '../../../src/http/clusterCredentials.js'
import { internalAccess, reachesForwardedTenant } from '../../../src/http/internalAccess.js'

const SECRET = 'a-cluster-secret-of-enough-length'
const credentials = clusterCredentials(SECRET)
const headers = (entries: Record<string, string>) => new Map(Object.entries(entries))

t.test('two credentials, neither being the secret', async (t) => {
  t.not(credentials.forwarded, credentials.node)
  t.not(credentials.forwarded, SECRET)
  t.not(credentials.node, SECRET)
  t.same(clusterCredentials(SECRET), credentials, 'every node derives the same')
  t.not(clusterCredentials(`${SECRET}x`).node, credentials.node, 'another secret, other credentials')
})

t.test('the node credential opens /cluster/* only', async (t) => {
  const node = headers({ [NODE_CREDENTIAL_HEADER]: credentials.node })
  t.same(internalAccess('/cluster/tenants/acme/restore', node, credentials), { kind: 'node' })
  t.equal(internalAccess('/v1/time/projects', node, credentials).kind, 'refused', 'not a forwarded request')
  const forwarded = headers({ [FORWARDED_CREDENTIAL_HEADER]: credentials.forwarded, [FORWARDED_TENANT_HEADER]: 'acme' })
  t.equal(internalAccess('/cluster/tenants/acme/restore', forwarded, credentials).kind, 'refused', 'the forwarding credential does not open /cluster/*')
  const secret = headers({ [NODE_CREDENTIAL_HEADER]: SECRET, 'x-timeledger-cluster': SECRET })
  t.equal(internalAccess('/cluster/tenants/acme/release', secret, credentials).kind, 'refused', 'the secret itself opens nothing')
  t.equal(internalAccess('/cluster/tenants/acme/release', headers({}), credentials).kind, 'refused')
})

t.test("the forwarding credential opens its tenant's /v1 only", async (t) => {
  const forwarded = headers({ [FORWARDED_CREDENTIAL_HEADER]: credentials.forwarded, [FORWARDED_TENANT_HEADER]: 'acme' })
  const access = internalAccess('/v1/time/projects', forwarded, credentials)
  t.same(access, { kind: 'forwarded', tenant: 'acme' })
  t.ok(reachesForwardedTenant(access, 'acme', true))
  t.notOk(reachesForwardedTenant(access, 'other', true), 'another tenant')
  t.notOk(reachesForwardedTenant(access, null, true), 'the public address')
  t.notOk(reachesForwardedTenant(access, 'acme', false), 'outside /v1')
  t.equal(internalAccess('/v1/x', headers({ [FORWARDED_CREDENTIAL_HEADER]: credentials.forwarded }), credentials).kind, 'refused', 'no tenant named')
  t.equal(internalAccess('/v1/x', headers({ [FORWARDED_CREDENTIAL_HEADER]: credentials.node, [FORWARDED_TENANT_HEADER]: 'acme' }), credentials).kind, 'refused', 'the node credential in its place')
})
