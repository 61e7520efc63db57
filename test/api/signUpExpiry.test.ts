/*
 * Unconfirmed sign-ups expire (SIGNUP_CONFIRMATION_LIFETIME_MS, here 1.5 s):
 * until then the address and the owner's e-mail are taken; afterwards the
 * sign-up cannot be confirmed, checkurl / checkemail / findurl no longer
 * see it, and a new sign-up may take the e-mail (in another tenant) and the
 * address (founding the tenant anew, the old owner gone). Two sign-ups
 * racing for an expired address: one wins. A confirmed account never
 * expires. The refounded tenant is what a restart recovers.
 */
import t from 'tap'
import { expectError, loginRaw, sleep } from '../helpers/identity.js'
import { accountIdIn, mailsTo, waitForMail } from '../helpers/mail.js'
import { startInProcess, tempDataDir } from '../helpers/server.js'

const LIFETIME_MS = 1500
const dataDir = tempDataDir('signup-expiry')
let server = await startInProcess(dataDir, { SIGNUP_CONFIRMATION_LIFETIME_MS: String(LIFETIME_MS) })
t.teardown(() => server.stop())

const signUp = (urlPrefix: string, email: string, password = 'owner-password') =>
  server.client.request('POST', '/v1/register/signup', {
    query: { apikey: server.client.apiKey },
    body: { account: { name: urlPrefix, urlPrefix }, owner: { firstName: 'Owen', lastName: 'Owner', email, password } },
  })
const confirm = (tenant: string, id: string) => server.client.request('POST', `/v1/auth/confirm/${id}`, { tenant, query: { apikey: server.client.apiKey } })
const publicCall = async (path: string, query: Record<string, string>) => (await server.client.request('GET', `/v1/register/${path}`, { query: { apikey: server.client.apiKey, ...query } })).json

t.test('an unconfirmed sign-up holds its address and e-mail until it expires, then frees both', async (t) => {
  const first = await signUp('lapse', 'lapse@expiry.test', 'first-password')
  t.equal(first.status, 201)
  const mail = await waitForMail(dataDir, 'lapse@expiry.test')
  t.equal(accountIdIn(mail), first.json.id, 'the owner is mailed the id')
  t.match(mail.text, /Confirm it within/, 'with the time it has')
  t.same(await publicCall('checkurl', { url: 'lapse' }), { exists: true }, 'the address is taken')
  t.same(await publicCall('checkemail', { email: 'lapse@expiry.test' }), { exists: true }, 'the e-mail is taken')
  expectError(t, await signUp('lapse', 'other@expiry.test'), 409, 'TL01-1102', 'the address, before it expires')
  expectError(t, await signUp('elsewhere', 'lapse@expiry.test'), 409, 'TL01-1102', 'the e-mail, before it expires')
  const confirmedKept = await server.client.createTenant('kept', 'kept@expiry.test')

  await sleep(LIFETIME_MS + 200)
  t.same(await publicCall('checkurl', { url: 'lapse' }), { exists: false }, 'expired: the address is free')
  t.same(await publicCall('checkemail', { email: 'lapse@expiry.test' }), { exists: false }, 'and the e-mail')
  t.same(await publicCall('findurl', { email: 'lapse@expiry.test' }), { url: null }, 'findurl finds nothing')
  const reset = await server.client.request('POST', '/v1/users/requestconfirmation', { query: { apikey: server.client.apiKey, email: 'lapse@expiry.test' } })
  t.equal(reset.status, 202)
  await sleep(200)
  t.equal(mailsTo(dataDir, 'lapse@expiry.test').length, 1, 'a password reset for it mails nothing (the sign-up mail is the only one)')
  expectError(t, await confirm('lapse', first.json.id as string), 400, 'TL01-1006', 'an expired sign-up cannot be confirmed')
  t.same(await publicCall('checkurl', { url: 'kept' }), { exists: true }, 'a confirmed account never expires')
  expectError(t, await signUp('kept', 'new@expiry.test'), 409, 'TL01-1102', 'nor is its address free')
  t.ok(confirmedKept.token)

  const elsewhere = await signUp('elsewhere', 'lapse@expiry.test', 'elsewhere-password')
  t.equal(elsewhere.status, 201, 'the e-mail signs up another address')
  t.equal((await confirm('elsewhere', elsewhere.json.id as string)).status, 200)
  t.equal((await loginRaw(server.client, 'elsewhere', 'lapse@expiry.test', 'elsewhere-password')).status, 200)

  const again = await signUp('lapse', 'second@expiry.test', 'second-password')
  t.equal(again.status, 201, 'a new sign-up takes the address')
  t.not(again.json.id, first.json.id, 'a new account')
  expectError(t, await confirm('lapse', first.json.id as string), 400, 'TL01-1006', "the old account's id")
  t.equal((await confirm('lapse', again.json.id as string)).status, 200, 'the new one confirms')
  t.equal((await loginRaw(server.client, 'lapse', 'second@expiry.test', 'second-password')).status, 200, 'its owner logs in')
  expectError(t, await loginRaw(server.client, 'lapse', 'lapse@expiry.test', 'first-password'), 401, 'TL01-1001', 'the old owner is gone')
  t.match((await publicCall('findurl', { email: 'lapse@expiry.test' })).url, /\/\/elsewhere\./, 'and names the live tenant')

  await server.stop()
  server = await startInProcess(dataDir, { SIGNUP_CONFIRMATION_LIFETIME_MS: String(LIFETIME_MS) })
  t.equal((await loginRaw(server.client, 'lapse', 'second@expiry.test', 'second-password')).status, 200, 'after a restart: the new owner')
  expectError(t, await loginRaw(server.client, 'lapse', 'lapse@expiry.test', 'first-password'), 401, 'TL01-1001', 'and not the old one')
  t.same(await publicCall('checkurl', { url: 'lapse' }), { exists: true }, 'the confirmed address is taken')
})

t.test('two sign-ups racing for an expired address: one wins', async (t) => {
  t.equal((await signUp('race', 'race-0@expiry.test')).status, 201)
  await sleep(LIFETIME_MS + 200)
  const answers = await Promise.all([signUp('race', 'race-1@expiry.test'), signUp('race', 'race-2@expiry.test')])
  t.same(answers.map((answer) => answer.status).sort(), [201, 409], 'one 201, one 409')
  const winner = answers.findIndex((answer) => answer.status === 201) + 1
  t.equal((await confirm('race', answers[winner - 1]?.json.id as string)).status, 200)
  t.equal((await loginRaw(server.client, 'race', `race-${winner}@expiry.test`, 'owner-password')).status, 200, 'the winner owns it')
})
