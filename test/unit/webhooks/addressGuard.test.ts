/*
 * The webhooks' address guard (src/domain/webhookAddress.ts): which
 * literal addresses are refused, what URLs are, and what a host name
 * resolving to a loopback address gives.
 */
import t from 'tap'
import { ApiError } from '../../../src/domain/errors.js'
import { checkWebhookUrl, forbiddenResolution, isForbiddenAddress, webhookUrl } from '../../../src/domain/webhookAddress.js'

t.test('forbidden addresses', async (t) => {
  const forbidden = [
    '0.0.0.0',
    '0.1.2.3',
    '10.0.0.1',
    '10.255.255.255',
    '100.64.0.1',
    '100.127.255.254',
    '127.0.0.1',
    '127.9.9.9',
    '169.254.169.254',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '192.0.0.8',
    '198.18.0.1',
    '224.0.0.1',
    '255.255.255.255',
    '::',
    '::1',
    'fe80::1',
    'fc00::1',
    'fd12:3456::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
    '::ffff:a9fe:a9fe',
    '64:ff9b::a00:1',
  ]
  for (const address of forbidden) t.ok(isForbiddenAddress(address), address)
  const allowed = ['1.1.1.1', '8.8.8.8', '100.63.255.255', '100.128.0.1', '172.15.255.255', '172.32.0.1', '192.169.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8']
  for (const address of allowed) t.notOk(isForbiddenAddress(address), address)
  t.notOk(isForbiddenAddress('example.com'), 'a name is no address')
})

t.test('IPv6 forms that reach inside a network or carry a refused IPv4 address', async (t) => {
  const forbidden = {
    'IPv4-compatible loopback, dotted': '::127.0.0.1',
    'IPv4-compatible loopback, hexadecimal': '::7f00:1',
    'IPv4-compatible, any (deprecated)': '::8.8.8.8',
    'site-local (deprecated)': 'fec0::1',
    'site-local, its last block': 'feff:ffff::1',
    'IPv4-translated loopback': '::ffff:0:7f00:1',
    'local-use NAT64': '64:ff9b:1::a00:1',
    '6to4 of a loopback address': '2002:7f00:1::1',
    '6to4 of a private address': '2002:c0a8:101::1',
    '6to4 of the metadata address': '2002:a9fe:a9fe::',
    'Teredo with a private server': '2001:0:a00:1::1',
    'Teredo with a loopback client (bits inverted)': '2001:0:808:808:0:0:80ff:fffe',
    'Teredo with a private client (bits inverted)': '2001::808:808:8000:ffff:f5ff:fffe',
  }
  for (const [label, address] of Object.entries(forbidden)) t.ok(isForbiddenAddress(address), `${label}: ${address}`)
  const allowed = {
    '6to4 of a public address': '2002:808:808::1',
    'Teredo between public addresses': '2001:0:808:808:0:0:f7f7:f7f7',
    'a global address': '2a00:1450:4001:82b::200e',
  }
  for (const [label, address] of Object.entries(allowed)) t.notOk(isForbiddenAddress(address), `${label}: ${address}`)
})

const refused = (make: () => unknown, message: RegExp) => {
  try {
    make()
  } catch (error) {
    return error instanceof ApiError && error.code === 'TL01-1105' && message.test(error.message)
  }
  return false
}

t.test('URLs', async (t) => {
  t.equal(webhookUrl('https://hooks.example.com/a?b=1', false).hostname, 'hooks.example.com')
  t.ok(refused(() => webhookUrl('nope', false), /not a URL/))
  t.ok(refused(() => webhookUrl('file:///etc/passwd', false), /http or https/))
  t.ok(refused(() => webhookUrl('https://u:p@example.com/', false), /credentials/))
  for (const url of [
    'http://127.0.0.1/',
    'http://[::1]:8080/',
    'http://0x7f.1/',
    'http://2130706433/',
    'http://[::ffff:169.254.169.254]/',
    'http://[::127.0.0.1]/',
    'http://[::7f00:1]/',
    'http://[fec0::1]/',
    'http://[2002:7f00:1::1]/',
  ]) {
    t.ok(
      refused(() => webhookUrl(url, false), /private, loopback/),
      url,
    )
    t.equal(webhookUrl(url, true).href, new URL(url).href, `${url} with WEBHOOK_ALLOW_PRIVATE`)
  }
})

t.test('names that resolve to forbidden addresses', async (t) => {
  const localhost = await forbiddenResolution(new URL('http://localhost/'))
  t.ok(localhost !== null && isForbiddenAddress(localhost), `localhost resolves to a loopback address (${localhost})`)
  await t.rejects(checkWebhookUrl('http://localhost:9/x', false), /resolves to/)
  t.equal((await checkWebhookUrl('http://localhost:9/x', true)).hostname, 'localhost')
  t.equal(await forbiddenResolution(new URL('http://no-such-host.invalid/')), null, 'a name that does not resolve is left to the delivery')
})

t.test('a delivery connects only to what the guard lets through, name or literal', async (t) => {
  const { startReceiver } = await import('../../helpers/webhookReceiver.js')
  const { postEvent } = await import('../../../src/webhooks/webhookPost.js')
  const receiver = await startReceiver()
  t.teardown(() => receiver.close())
  const port = new URL(receiver.url).port
  const post = (url: string, allowPrivate: boolean) => postEvent({ url: new URL(url), webhookId: 'w', secret: 'sixteen-characters!', eventId: '1.0', body: '{}', timeoutMs: 2000, allowPrivate })
  const byName = await post(`http://localhost:${port}/x`, false)
  t.match(byName, { ok: false, status: null, error: /refused: localhost resolves to/ }, 'the name is looked up on the connection and refused')
  t.match(await post(`http://127.0.0.1:${port}/x`, false), { ok: false, error: /refused: 127\.0\.0\.1/ })
  t.equal(receiver.received.length, 0, 'nothing reached the receiver')
  t.match(await post(`http://localhost:${port}/x`, true), { ok: true, status: 200 })
  receiver.answer = () => 503
  t.match(await post(`http://127.0.0.1:${port}/x`, true), { ok: false, status: 503, error: /answered 503/ })
})
