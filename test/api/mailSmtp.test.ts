/*
 * The outbox over SMTP (SMTP_URL set), against a real SMTP server in this
 * process (the smtp-server package as a sink on a free port): the public
 * password-change step 1 answers 202 without the id, the mail reaches the
 * user's address (envelope and header) and the id in it sets the password;
 * sign-up mails its owner too. With the mail server gone, writes are kept
 * and answered as before, the failure is counted and the server carries on.
 */
import t from 'tap'
import { SMTPServer, type SMTPServerEnvelope } from 'smtp-server'
import { basic, expectError, loginRaw } from '../helpers/identity.js'
import { accountIdIn, confirmationIdIn, parseMail, type SentMail } from '../helpers/mail.js'
import { startInProcess, tempDataDir } from '../helpers/server.js'
import { sleep } from '../helpers/identity.js'

interface Caught extends SentMail {
  envelopeTo: string[]
}

const caught: Caught[] = []
const sink = new SMTPServer({
  authOptional: true,
  disabledCommands: ['STARTTLS'],
  logger: false,
  onData(stream, session, callback) {
    const chunks: Buffer[] = []
    stream.on('data', (chunk: Buffer) => chunks.push(chunk))
    stream.on('end', () => {
      const envelope = session.envelope as SMTPServerEnvelope
      caught.push({ envelopeTo: envelope.rcptTo.map((rcpt) => rcpt.address), ...parseMail(Buffer.concat(chunks).toString('utf8')) })
      callback()
    })
  },
})
await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve))
const sinkPort = (sink.server.address() as { port: number }).port
t.teardown(() => new Promise<void>((resolve) => sink.close(() => resolve())))

async function caughtMail(to: string, count: number): Promise<Caught> {
  const deadline = Date.now() + 10_000
  for (;;) {
    const mails = caught.filter((mail) => mail.envelopeTo.includes(to))
    if (mails.length >= count) return mails[mails.length - 1] as Caught
    if (Date.now() > deadline) throw new Error(`no mail #${count} to ${to} reached the SMTP sink`)
    await sleep(20)
  }
}

t.test('password change and sign-up mails go over SMTP to the user', async (t) => {
  const server = await startInProcess(tempDataDir('mail-smtp'), { SMTP_URL: `smtp://127.0.0.1:${sinkPort}`, MAIL_FROM: 'Ledger <ledger@mail.test>' })
  t.teardown(() => server.stop())
  const { client } = server
  const owner = await client.createTenant('smtp', 'owner@smtp.test', 'owner-password')
  const signUp = await caughtMail('owner@smtp.test', 1)
  t.equal(signUp.to, 'owner@smtp.test', 'the sign-up mail is addressed to the owner')
  t.equal(accountIdIn(signUp), owner.accountId, 'and carries the account id that confirms it')

  const answer = await client.request('POST', '/v1/users/requestconfirmation', { query: { apikey: client.apiKey, email: 'OWNER@smtp.test' } })
  t.equal(answer.status, 202)
  t.same(answer.json, {}, 'no id in the answer')
  const mail = await caughtMail('owner@smtp.test', 2)
  t.same(mail.envelopeTo, ['owner@smtp.test'], 'delivered to the user alone')
  t.equal(mail.to, 'owner@smtp.test')
  const id = confirmationIdIn(mail)
  t.notOk(answer.text.includes(id))
  const confirmed = await client.request('POST', `/v1/auth/confirm/${id}`, { query: { apikey: client.apiKey }, headers: basic('', 'mailed-password') })
  t.equal(confirmed.status, 200, 'the id from the mail sets the password')
  t.equal((await loginRaw(client, 'smtp', 'owner@smtp.test', 'mailed-password')).status, 200, 'the new password logs in')
  expectError(t, await loginRaw(client, 'smtp', 'owner@smtp.test', 'owner-password'), 401, 'TL01-1001', 'the old one')
  t.equal(server.service.services.outbox.failed, 0)
})

t.test('a mail server that is down loses no write and stops nothing', async (t) => {
  const closed = new SMTPServer({ authOptional: true, disabledCommands: ['STARTTLS'], logger: false })
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
  const deadPort = (closed.server.address() as { port: number }).port
  await new Promise<void>((resolve) => closed.close(() => resolve()))
  const errors: string[] = []
  const original = console.error
  console.error = (...args: unknown[]) => void errors.push(args.map(String).join(' '))
  t.teardown(() => (console.error = original))
  const server = await startInProcess(tempDataDir('mail-down'), { SMTP_URL: `smtp://127.0.0.1:${deadPort}` })
  t.teardown(() => server.stop())
  const { client } = server
  const owner = await client.createTenant('nomail', 'owner@nomail.test', 'owner-password')
  t.ok(owner.token, 'sign-up, confirm and login work without a mail server')
  const answer = await client.request('POST', '/v1/users/requestconfirmation', { query: { apikey: client.apiKey, email: 'owner@nomail.test' } })
  t.equal(answer.status, 202)
  const { outbox } = server.service.services
  const deadline = Date.now() + 10_000
  while (outbox.failed < 2 && Date.now() < deadline) await sleep(20)
  t.equal(outbox.failed, 2, 'both mails failed')
  t.ok(
    errors.some((line) => line.includes('owner@nomail.test') && line.includes('could not be sent')),
    'and the failure is logged',
  )
  const projects = await client.request('POST', '/v1/time/projects', { tenant: 'nomail', query: { token: owner.token }, body: { name: 'Still here' } })
  t.equal(projects.status, 201, 'the server carries on')
})
