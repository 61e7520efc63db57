/*
 * The failed-login limits hold against parallel guesses: every attempt
 * takes its slot before its password is checked, so of 40 wrong logins sent
 * at once for one e-mail (from 40 addresses: the account limit), or from
 * one address (for 40 e-mails: the address limit), exactly the allowed 10
 * are checked (401) and the rest get 429 TL01-9010 with Retry-After; the
 * owner still logs in from an address they logged in from before. A right password gives its slot back; the
 * failures before it still count. After the block a right login works.
 * Right passwords sent at once, more of them than failures are allowed,
 * all log in: an attempt that finds the limit full of attempts still being
 * checked waits for them instead of being refused; and wrong ones mixed in
 * are still checked no more than the limit allows.
 */
import t from 'tap'
import { startInProcess, tempDataDir } from '../helpers/server.js'
import { loginFrom, sleep } from '../helpers/identity.js'

const ALLOWED = 10
const BLOCK_MS = 3_000
const PARALLEL = 40

interface LoginAnswer {
  status: number
  code: string | undefined
  retryAfter: number
}

/** A login from a chosen loopback address, reduced to what the tally needs. */
async function loginAnswer(port: number, localAddress: string, tenant: string, user: string, password: string): Promise<LoginAnswer> {
  const answer = await loginFrom(port, localAddress, tenant, user, password)
  return { status: answer.status, code: (answer.json as { code?: string }).code, retryAfter: Number(answer.headers['retry-after']) }
}

function tally(answers: readonly LoginAnswer[]): { wrong: number; limited: number; other: number } {
  const wrong = answers.filter((a) => a.status === 401 && a.code === 'TL01-1001').length
  const limited = answers.filter((a) => a.status === 429 && a.code === 'TL01-9010' && a.retryAfter >= 1 && a.retryAfter <= BLOCK_MS / 1000).length
  return { wrong, limited, other: answers.length - wrong - limited }
}

const server = await startInProcess(tempDataDir('identity-parallel-logins'), {
  LOGIN_FAILURES_ALLOWED: String(ALLOWED),
  LOGIN_ACCOUNT_FAILURES_ALLOWED: String(ALLOWED),
  LOGIN_ADDRESS_FAILURES_ALLOWED: String(ALLOWED),
  LOGIN_FAILURE_WINDOW_MS: String(BLOCK_MS),
})
t.teardown(() => server.stop())
const { client, service } = server
const port = service.port
await client.createTenant('siege', 'owner@siege.test', 'right-password')

t.test('40 parallel wrong logins for one e-mail, each from its own address', async (t) => {
  t.equal((await loginAnswer(port, '127.0.1.250', 'siege', 'owner@siege.test', 'right-password')).status, 200, 'the owner logs in from home first')
  const answers = await Promise.all(Array.from({ length: PARALLEL }, (_, index) => loginAnswer(port, `127.0.1.${index + 1}`, 'siege', 'owner@siege.test', `wrong-${index}`)))
  t.same(tally(answers), { wrong: ALLOWED, limited: PARALLEL - ALLOWED, other: 0 }, 'exactly the allowed attempts were checked, the rest refused with Retry-After')
  const blocked = await loginAnswer(port, '127.0.1.200', 'siege', 'owner@siege.test', 'right-password')
  t.equal(blocked.status, 429, 'even the right password is refused from a new address while the e-mail is blocked')
  t.equal((await loginAnswer(port, '127.0.1.250', 'siege', 'owner@siege.test', 'right-password')).status, 200, 'but not from home')
  await sleep(blocked.retryAfter * 1000 + 100)
  t.equal((await loginAnswer(port, '127.0.1.200', 'siege', 'owner@siege.test', 'right-password')).status, 200, 'after Retry-After the right password logs in')
})

t.test('40 parallel wrong logins from one address, each for its own e-mail', async (t) => {
  const answers = await Promise.all(Array.from({ length: PARALLEL }, (_, index) => loginAnswer(port, '127.0.2.1', 'siege', `nobody-${index}@siege.test`, 'whatever-password')))
  t.same(tally(answers), { wrong: ALLOWED, limited: PARALLEL - ALLOWED, other: 0 }, 'exactly the allowed attempts were checked, the rest refused with Retry-After')
  const blocked = await loginAnswer(port, '127.0.2.1', 'siege', 'owner@siege.test', 'right-password')
  t.equal(blocked.status, 429, 'the address is blocked for every e-mail')
  t.equal((await loginAnswer(port, '127.0.2.2', 'siege', 'owner@siege.test', 'right-password')).status, 200, 'another address is not')
  await sleep(blocked.retryAfter * 1000 + 100)
  t.equal((await loginAnswer(port, '127.0.2.1', 'siege', 'owner@siege.test', 'right-password')).status, 200, 'after Retry-After the address logs in again')
})

t.test('a right password gives its slot back; failures before it still count', async (t) => {
  for (let index = 0; index < 3 * ALLOWED; index += 1) {
    t.equal((await loginAnswer(port, '127.0.3.1', 'siege', 'owner@siege.test', 'right-password')).status, 200, `right login ${index + 1}`)
  }
  for (let index = 0; index < ALLOWED - 1; index += 1) t.equal((await loginAnswer(port, '127.0.3.1', 'siege', 'owner@siege.test', `wrong-${index}`)).status, 401)
  t.equal((await loginAnswer(port, '127.0.3.1', 'siege', 'owner@siege.test', 'right-password')).status, 200, 'one failure short of the limit the right password still works')
  t.equal((await loginAnswer(port, '127.0.3.1', 'siege', 'owner@siege.test', 'wrong-last')).status, 401, 'the tenth failure is checked')
  const blocked = await loginAnswer(port, '127.0.3.1', 'siege', 'owner@siege.test', 'right-password')
  t.equal(blocked.status, 429, 'and then the e-mail is blocked: the right login in between did not wipe the failures')
  t.equal(blocked.code, 'TL01-9010')
  await sleep(blocked.retryAfter * 1000 + 100)
})

t.test('more right logins at once than failures are allowed, from one address for one e-mail, all log in', async (t) => {
  const answers = await Promise.all(Array.from({ length: 3 * ALLOWED }, () => loginAnswer(port, '127.0.4.1', 'siege', 'owner@siege.test', 'right-password')))
  t.same(
    answers.map((answer) => answer.status),
    Array.from({ length: 3 * ALLOWED }, () => 200),
    'no right login is refused for the failures that right logins in flight might have been',
  )
})

t.test('right and wrong logins at once: at most the allowed failures are checked, right ones wait for room', async (t) => {
  const wrong = Array.from({ length: 2 * ALLOWED }, (_, index) => loginAnswer(port, '127.0.5.1', 'siege', 'owner@siege.test', `wrong-${index}`))
  const right = Array.from({ length: ALLOWED }, () => loginAnswer(port, '127.0.5.1', 'siege', 'owner@siege.test', 'right-password'))
  const wrongAnswers = await Promise.all(wrong)
  const rightAnswers = await Promise.all(right)
  t.equal(tally(wrongAnswers).wrong, ALLOWED, 'exactly the allowed wrong passwords were checked')
  t.equal(tally(wrongAnswers).limited, ALLOWED, 'the other wrong ones were refused')
  t.equal(tally([...wrongAnswers, ...rightAnswers]).other, rightAnswers.filter((answer) => answer.status === 200).length, 'every answer is a 401, a 429 or a login')
  const blocked = await loginAnswer(port, '127.0.5.1', 'siege', 'owner@siege.test', 'right-password')
  t.equal(blocked.status, 429, 'the failures block the e-mail afterwards')
  await sleep(blocked.retryAfter * 1000 + 100)
})
