/*
 * Password hashes: new ones are Argon2id at the configured cost (the tests
 * run at m=1024 KiB, t=1; the default is OWASP's m=19456 KiB, t=2, p=1). A
 * scrypt hash of before still logs its user in, and that login replaces it
 * with an Argon2id hash in the log (it survives a restart); a wrong password
 * leaves it as it was. A hash of another Argon2 cost is replaced the same
 * way when the cost setting changes. checkPassword without a stored hash
 * (no such user) answers false, as slowly as a real check.
 */
import crypto from 'node:crypto'
import t from 'tap'
import { checkPassword, hashPassword, OWASP_PASSWORD_COST } from '../../src/domain/credentials.js'
import { liveUserWithEmail } from '../../src/domain/resources/user.js'
import { loadConfig } from '../../src/config.js'
import { startInProcess, tempDataDir, type InProcessServer } from '../helpers/server.js'
import { loginRaw } from '../helpers/identity.js'

/** A hash as the service wrote them before Argon2id: `scrypt$N$salt$hash`, base64url. */
function legacyScryptHash(password: string, cost: number): string {
  const salt = crypto.randomBytes(16)
  const hash = crypto.scryptSync(password, salt, 32, { N: cost, r: 8, p: 1, maxmem: 256 * cost * 8 })
  return `scrypt$${cost}$${salt.toString('base64url')}$${hash.toString('base64url')}`
}

function actorOf(server: InProcessServer, tenant: string) {
  const actor = server.service.services.registry.get(tenant)
  if (actor === undefined) throw new Error(`no tenant ${tenant}`)
  return actor
}

function storedUser(server: InProcessServer, tenant: string, email: string) {
  const user = liveUserWithEmail(actorOf(server, tenant).state, email)
  if (user === undefined) throw new Error(`no user ${email}`)
  return user
}

function storedHash(server: InProcessServer, tenant: string, email: string): string {
  return storedUser(server, tenant, email).password as string
}

async function setStoredHash(server: InProcessServer, tenant: string, email: string, hash: string): Promise<void> {
  await actorOf(server, tenant).write((tx) => {
    const user = liveUserWithEmail(tx.state, email)
    if (user === undefined) throw new Error(`no user ${email}`)
    tx.put('User', { ...user, password: hash })
  })
}

t.test('the default cost is OWASP’s minimum for Argon2id', async (t) => {
  t.same(loadConfig({}).passwordCost, { memoryKiB: 19_456, passes: 2, parallelism: 1 })
  t.same(OWASP_PASSWORD_COST, loadConfig({}).passwordCost)
  t.same(loadConfig({ PASSWORD_HASH_MEMORY_KIB: '1024', PASSWORD_HASH_PASSES: '1' }).passwordCost, { memoryKiB: 1024, passes: 1, parallelism: 1 })
})

t.test('a scrypt hash of before logs in once and is replaced by Argon2id; a wrong password changes nothing', async (t) => {
  const dataDir = tempDataDir('password-hashing')
  let server = await startInProcess(dataDir)
  t.teardown(() => server.stop())
  await server.client.createTenant('hashes', 'owner@hashes.test', 'owner-password')
  t.match(storedHash(server, 'hashes', 'owner@hashes.test'), /^\$argon2id\$v=19\$m=1024,p=1,t=1\$/, 'a new hash is Argon2id at the configured cost')

  const legacy = legacyScryptHash('owner-password', 16_384)
  await setStoredHash(server, 'hashes', 'owner@hashes.test', legacy)
  t.equal((await loginRaw(server.client, 'hashes', 'owner@hashes.test', 'wrong-password')).status, 401, 'a wrong password against the scrypt hash')
  t.equal(storedHash(server, 'hashes', 'owner@hashes.test'), legacy, 'leaves it in place')
  const version = storedUser(server, 'hashes', 'owner@hashes.test').version

  t.equal((await loginRaw(server.client, 'hashes', 'owner@hashes.test', 'owner-password')).status, 200, 'the right password against the scrypt hash')
  const rehashed = storedHash(server, 'hashes', 'owner@hashes.test')
  t.match(rehashed, /^\$argon2id\$v=19\$m=1024,p=1,t=1\$/, 'the login replaced it with Argon2id')
  t.equal(storedUser(server, 'hashes', 'owner@hashes.test').version, version, 'without a new version')

  await server.stop()
  server = await startInProcess(dataDir)
  t.equal(storedHash(server, 'hashes', 'owner@hashes.test'), rehashed, 'the new hash was logged: it is there after a restart')
  t.equal((await loginRaw(server.client, 'hashes', 'owner@hashes.test', 'owner-password')).status, 200, 'and logs in')
  t.equal(storedHash(server, 'hashes', 'owner@hashes.test'), rehashed, 'a hash at the current cost is kept')

  await setStoredHash(server, 'hashes', 'owner@hashes.test', legacyScryptHash('owner-password', 1024))
  const together = await Promise.all(Array.from({ length: 6 }, () => loginRaw(server.client, 'hashes', 'owner@hashes.test', 'owner-password')))
  t.same(
    together.map((answer) => answer.status),
    [200, 200, 200, 200, 200, 200],
    'logins at once against a scrypt hash all get in, though the first re-hash lands before the others write',
  )
  t.match(storedHash(server, 'hashes', 'owner@hashes.test'), /^\$argon2id\$/)

  await server.stop()
  server = await startInProcess(dataDir, { PASSWORD_HASH_MEMORY_KIB: '2048' })
  t.equal((await loginRaw(server.client, 'hashes', 'owner@hashes.test', 'owner-password')).status, 200, 'after the cost setting changed')
  t.match(storedHash(server, 'hashes', 'owner@hashes.test'), /^\$argon2id\$v=19\$m=2048,p=1,t=1\$/, 'the hash moves to the new cost')
})

t.test('checkPassword', async (t) => {
  const cost = { memoryKiB: 1024, passes: 1, parallelism: 1 }
  const hash = await hashPassword('right-password', cost)
  t.same(await checkPassword('right-password', hash, cost), { matches: true, rehashed: null })
  t.same(await checkPassword('wrong-password', hash, cost), { matches: false, rehashed: null })
  t.same(await checkPassword('right-password', undefined, cost), { matches: false, rehashed: null }, 'no stored hash: false')
  t.same(await checkPassword('right-password', 'scrypt$1000$AAAA$AAAA', cost), { matches: false, rehashed: null }, 'a malformed scrypt hash: false, no throw')
  t.same(await checkPassword('right-password', '$argon2id$garbage', cost), { matches: false, rehashed: null }, 'a malformed Argon2 hash: false, no throw')
  const fromScrypt = await checkPassword('right-password', legacyScryptHash('right-password', 1024), cost)
  t.ok(fromScrypt.matches && fromScrypt.rehashed?.startsWith('$argon2id$'), 'a scrypt hash verifies and comes back as Argon2id')
  t.ok((await checkPassword('right-password', fromScrypt.rehashed, cost)).matches, 'which verifies')
})
