/*
 * The webhook signature (src/webhooks/signature.ts): Stripe's scheme, an
 * HMAC-SHA256 of "<t>.<body>" checked against a value computed here the
 * way README's receiver example does it; a changed body, secret or time, or
 * an old timestamp, fails the check.
 */
import crypto from 'node:crypto'
import t from 'tap'
import { signatureHeader, verifySignature } from '../../../src/webhooks/signature.js'

const secret = 'whsec-test-secret-0123456789'
const body = '{"seq":42,"op":0,"kind":"created","object":{"name":"Ä ✓"}}'
const at = 1_764_000_000

t.test('the header is t=<seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>', async (t) => {
  const header = signatureHeader(secret, body, at)
  const expected = crypto.createHmac('sha256', secret).update(`${at}.${body}`).digest('hex')
  t.equal(header, `t=${at},v1=${expected}`)
  t.equal(signatureHeader(secret, Buffer.from(body), at), header, 'the same over the raw bytes')
})

t.test('verification', async (t) => {
  const header = signatureHeader(secret, body, at)
  t.ok(verifySignature(secret, body, header, at + 10))
  t.notOk(verifySignature(`${secret}x`, body, header, at), 'another secret')
  t.notOk(verifySignature(secret, `${body} `, header, at), 'another body')
  t.notOk(verifySignature(secret, body, header.replace(`t=${at}`, `t=${at + 1}`), at), 'another timestamp')
  t.notOk(verifySignature(secret, body, header, at + 301), 'too old')
  t.notOk(verifySignature(secret, body, 'garbage', at), 'no header to speak of')
  t.notOk(verifySignature(secret, body, `t=${at},v1=abc`, at), 'a short signature')
})
