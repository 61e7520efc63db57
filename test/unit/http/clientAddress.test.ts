/*
 * The client's address behind proxies (http/clientAddress.ts): a report
 * (PROXY protocol, X-Forwarded-For) is believed only from a trusted proxy,
 * and the client is the rightmost hop that is not one; addresses are
 * compared in one canonical text.
 */
import t from 'tap'
import { canonicalAddress, clientAddressOf, TrustedProxies } from '../../../src/http/clientAddress.js'
import { loadConfig, parseTrustedProxies } from '../../../src/config.js'

const HAPROXY = new TrustedProxies(['127.0.0.1', '10.0.0.0/8', 'fd00::/8'])
const NONE = new TrustedProxies([])

t.test('without trusted proxies the peer is the client, whatever it reports', async (t) => {
  t.equal(clientAddressOf('127.0.0.1', '203.0.113.9', '198.51.100.1', NONE), '127.0.0.1')
  t.equal(clientAddressOf('192.0.2.7', '203.0.113.9', '198.51.100.1', HAPROXY), '192.0.2.7', 'an untrusted peer: its PROXY header and X-Forwarded-For are ignored')
})

t.test('from a trusted proxy: the rightmost untrusted hop', async (t) => {
  t.equal(clientAddressOf('127.0.0.1', '203.0.113.9', undefined, HAPROXY), '203.0.113.9', 'the PROXY protocol address')
  t.equal(clientAddressOf('127.0.0.1', '203.0.113.9', '198.51.100.1', HAPROXY), '203.0.113.9', 'a forged X-Forwarded-For left of the PROXY address proves nothing')
  t.equal(clientAddressOf('127.0.0.1', '', '198.51.100.1, 203.0.113.9', HAPROXY), '203.0.113.9', 'X-Forwarded-For: the last hop')
  t.equal(clientAddressOf('127.0.0.1', '', '198.51.100.1, 203.0.113.9, 10.1.2.3', HAPROXY), '203.0.113.9', 'trusted hops are skipped')
  t.equal(clientAddressOf('127.0.0.1', '', '10.9.9.9, 10.1.2.3', HAPROXY), '10.9.9.9', 'all trusted: the leftmost')
  t.equal(clientAddressOf('127.0.0.1', '', 'garbage, 10.1.2.3', HAPROXY), '10.1.2.3', 'a hop that is no address ends the walk at the trusted hop right of it')
  t.equal(clientAddressOf('127.0.0.1', '', undefined, HAPROXY), '127.0.0.1', 'nothing reported: the peer')
  t.equal(clientAddressOf('0000:0000:0000:0000:0000:ffff:7f00:0001', '0000:0000:0000:0000:0000:0000:0000:0001', undefined, HAPROXY), '::1', 'uWS writes IPv6 in full')
  t.equal(clientAddressOf('127.0.0.1', '', '[2001:db8::1]:4711', HAPROXY), '2001:db8::1', 'brackets and port taken off')
  t.equal(clientAddressOf('127.0.0.1', '', '203.0.113.9:4711', HAPROXY), '203.0.113.9')
})

t.test('canonical addresses', async (t) => {
  t.equal(canonicalAddress('::ffff:127.0.0.1'), '127.0.0.1')
  t.equal(canonicalAddress('0000:0000:0000:0000:0000:ffff:c000:0207'), '192.0.2.7')
  t.equal(canonicalAddress('2001:0DB8:0000:0000:0000:0000:0000:0001'), '2001:db8::1')
  t.equal(canonicalAddress('unknown'), null)
  t.equal(canonicalAddress(''), null)
})

t.test('TRUSTED_PROXIES: addresses and CIDR ranges, none by default, a bad entry refused', async (t) => {
  t.same(parseTrustedProxies(' 127.0.0.1, 10.0.0.0/8 ,::1,fd00::/8 '), ['127.0.0.1', '10.0.0.0/8', '::1', 'fd00::/8'])
  t.same(loadConfig({}).trustedProxies, [], 'none by default')
  for (const bad of ['localhost', '10.0.0.0/33', '::1/129', '10.0.0.0/8/1', '1.2.3']) t.throws(() => parseTrustedProxies(bad), /TRUSTED_PROXIES/, bad)
})
