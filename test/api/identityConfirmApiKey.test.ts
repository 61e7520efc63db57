/*
 * Account confirmation is a registration call and needs the API key like
 * the others (interface.md, "Registration": `apikey` required): without it
 * or with a wrong one 401 TL01-1001 and the account stays unconfirmed; with
 * it the account is confirmed and its owner logs in.
 */
import t from 'tap'
import { startInProcess } from '../helpers/server.js'
import { expectError, loginRaw } from '../helpers/identity.js'

const server = await startInProcess()
t.teardown(() => server.stop())
const { client } = server

t.test('POST auth/confirm/{id} needs the API key', async (t) => {
  const signup = await client.request('POST', '/v1/register/signup', {
    query: { apikey: client.apiKey },
    body: { account: { name: 'Keyed Ltd', urlPrefix: 'keyed' }, owner: { firstName: 'Kim', lastName: 'Key', email: 'kim@keyed.test', password: 'keyed-password' } },
  })
  t.equal(signup.status, 201)
  const id = signup.json.id as string
  expectError(t, await client.request('POST', `/v1/auth/confirm/${id}`, { tenant: 'keyed' }), 401, 'TL01-1001', 'no API key')
  expectError(t, await client.request('POST', `/v1/auth/confirm/${id}`, { tenant: 'keyed', query: { apikey: 'not-a-key' } }), 401, 'TL01-1001', 'a wrong API key')
  expectError(t, await client.request('POST', `/v1/auth/confirm/${id}`, { tenant: 'keyed', headers: { 'x-api-key': 'not-a-key' } }), 401, 'TL01-1001', 'a wrong API key header')
  expectError(t, await loginRaw(client, 'keyed', 'kim@keyed.test', 'keyed-password'), 401, 'TL01-1007', 'still unconfirmed after the refused calls')
  expectError(t, await client.request('POST', '/v1/auth/confirm/not-the-id', { tenant: 'keyed', query: { apikey: client.apiKey } }), 400, 'TL01-1006', 'with the key, a wrong id')
  const confirmed = await client.request('POST', `/v1/auth/confirm/${id}`, { tenant: 'keyed', query: { apikey: client.apiKey } })
  t.equal(confirmed.status, 200, 'with the key the account is confirmed')
  t.match(confirmed.json, { id, confirmed: true })
  t.equal((await loginRaw(client, 'keyed', 'kim@keyed.test', 'keyed-password')).status, 200, 'and its owner logs in')
})
