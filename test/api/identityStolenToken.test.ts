/*
 * A stolen access token does not keep the account for good
 * (domain/passwordRules.ts). Changing one's own password needs the current
 * one (`currentPassword`): without it, or with a wrong one, a PUT, a batch
 * item, the authenticated step 1 (`$confirmation` for oneself, which
 * answers the id) and a change of one's e-mail (`$setEmail`: a reset is
 * mailed there) are 403 TL01-1008 and change nothing, the victim's other
 * sessions go on; wrong guesses count in the login limits (429 past them).
 * A reset by anyone else — the owner or an admin by PUT — ends every
 * session of the user and revokes their secret keys and calendar secret,
 * so a key (or a calendar URL) made with the stolen token does not outlive
 * it. Before, the thief set a new
 * password with the token alone, ending the victim's sessions, and a key
 * made with it survived the owner's reset.
 */
import t from 'tap'
import { api } from '../helpers/api.js'
import { expectError, loginRaw, whoAmI } from '../helpers/identity.js'
import { startInProcess } from '../helpers/server.js'
import { addUser } from '../helpers/users.js'

const TENANT = 'stolen'
// Three failed guesses per (tenant, name, address) in the window, then 429.
const server = await startInProcess(undefined, { LOGIN_FAILURES_ALLOWED: '3', LOGIN_ACCOUNT_FAILURES_ALLOWED: '0' })
t.teardown(() => server.stop())
const { client } = server
const owner = await client.createTenant(TENANT)
const ownerApi = api(client, TENANT, owner.token)
const admin = await addUser(server, TENANT, owner.token, 'Ada', { admin: true })
const adminApi = api(client, TENANT, admin.token)
const PASSWORD = 'user-password'

/** A user signed in twice: the victim's own session and the token a thief took. */
async function victim(name: string) {
  const user = await addUser(server, TENANT, owner.token, name)
  const thief = api(client, TENANT, (await loginRaw(client, TENANT, user.email, PASSWORD)).json.token as string)
  return { ...user, own: api(client, TENANT, user.token), thief }
}

async function logsIn(email: string, password: string): Promise<boolean> {
  return (await loginRaw(client, TENANT, email, password)).status === 200
}

async function keyLogsIn(text: string): Promise<boolean> {
  return (await loginRaw(client, TENANT, text, '')).status === 200
}

t.test('a token alone does not change its user’s password, by any path', async (t) => {
  const vic = await victim('Vic')
  expectError(t, await vic.thief.put('users/@self', { password: 'taken-over-1' }, { version_ignore: true }), 403, 'TL01-1008', 'PUT without currentPassword')
  const batch = await vic.thief.post('batch', [{ id: 'pw', method: 'PUT', path: `/v1/users/${vic.id}?version_ignore=true`, body: JSON.stringify({ password: 'taken-over-2' }) }])
  t.equal(batch.json?.[0]?.code, 403, 'a batch item without currentPassword')
  const step1 = await vic.thief.post('users/@self/$confirmation')
  expectError(t, step1, 403, 'TL01-1008', 'step 1 for oneself without currentPassword')
  t.notOk('id' in (step1.json ?? {}), 'no confirmation id is given out')
  const moved = await vic.thief.post('users/@self/$setEmail', undefined, { email: 'thief@elsewhere.test' })
  expectError(t, moved, 403, 'TL01-1008', '$setEmail without currentPassword (a reset would be mailed there)')
  t.ok(await logsIn(vic.email, PASSWORD), 'the password and the e-mail are unchanged')
  t.equal((await whoAmI(client, TENANT, vic.token)).status, 200, "the victim's session goes on")
  t.equal((await vic.thief.get('users/@self')).json.version, (await vic.own.get('users/@self')).json.version, 'the user record did not change')
})

t.test('a wrong current password is refused and counts as a failed login', async (t) => {
  const wes = await victim('Wes')
  for (let guess = 1; guess <= 3; guess += 1) {
    expectError(t, await wes.thief.put('users/@self', { password: 'taken-over', currentPassword: `guess-${guess}` }, { version_ignore: true }), 403, 'TL01-1008', `guess ${guess}`)
  }
  const held = await wes.thief.put('users/@self', { password: 'taken-over', currentPassword: PASSWORD }, { version_ignore: true })
  expectError(t, held, 429, 'TL01-9010', 'past the login limit, even the right one waits')
  t.ok(held.headers['retry-after'], 'with Retry-After')
  t.ok(!(await logsIn(wes.email, 'taken-over')), 'nothing was changed')
})

t.test("one's own change with the current password: the session stays, the others end", async (t) => {
  const una = await victim('Una')
  const changed = await una.own.put('users/@self', { password: 'una-new-password', currentPassword: PASSWORD }, { version_ignore: true })
  t.equal(changed.status, 200, changed.text)
  t.equal((await whoAmI(client, TENANT, una.token)).status, 200, 'the changing session stays')
  expectError(t, await una.thief.get('users/@self'), 401, 'TL01-1010', 'the other session ends')
  t.ok(await logsIn(una.email, 'una-new-password'))
  const asked = await una.own.post('users/@self/$confirmation', { currentPassword: 'una-new-password' })
  t.equal(asked.status, 201, 'step 1 for oneself with the current password answers the id')
  t.type(asked.json.id, 'string')
})

/** Whether a calendar secret still opens its user's calendar feed. */
async function feedOpens(secret: string): Promise<boolean> {
  return (await client.request('GET', '/v1/users/@self/calendar.ics', { tenant: TENANT, query: { secret } })).status === 200
}

t.test("a key or calendar secret made with a stolen token does not outlive the owner's or an admin's reset", async (t) => {
  for (const [label, resetter] of [
    ['the owner', ownerApi],
    ['an admin', adminApi],
  ] as const) {
    const vic = await victim(`Kim${label === 'the owner' ? 'o' : 'a'}`)
    const key = await vic.thief.post('users/@self/secretkeys', { name: 'backdoor' })
    t.equal(key.status, 201, key.text)
    const own = await vic.own.post('users/@self/secretkeys', { name: 'mine' })
    t.ok(await keyLogsIn(key.json.secretKey), `${label}: the thief's key logs in before`)
    const calendar = await vic.thief.post('users/@self/calendar/secret')
    t.equal(calendar.status, 201, calendar.text)
    t.ok(await feedOpens(calendar.json.secret), `${label}: the thief's calendar secret opens the feed before`)
    const reset = await resetter.put(`users/${vic.id}`, { password: 'reset-by-superuser' }, { version_ignore: true })
    t.equal(reset.status, 200, `${label}: the reset (no current password needed) ${reset.text}`)
    t.notOk(await keyLogsIn(key.json.secretKey), `${label}: the thief's key no longer logs in`)
    t.notOk(await keyLogsIn(own.json.secretKey), `${label}: nor any other key of the user`)
    t.notOk(await feedOpens(calendar.json.secret), `${label}: nor the calendar secret`)
    expectError(t, await vic.thief.get('users/@self'), 401, 'TL01-1010', `${label}: the stolen token ends`)
    expectError(t, await vic.own.get('users/@self'), 401, 'TL01-1010', `${label}: every session of the user ends`)
    t.ok(await logsIn(vic.email, 'reset-by-superuser'), `${label}: the new password logs in`)
  }
})
