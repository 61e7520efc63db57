/*
 * The outbox on its own: the file transport writes one complete `.eml`
 * (mode 0600) per mail under DATA_DIR/outbox and the outbox logs its path;
 * deliveries run in the background, at most MAX_PENDING_MAILS at once (the
 * next is refused with a log line, not queued without bound); a failed
 * delivery is logged and counted, never thrown; close waits for the
 * deliveries under way.
 */
import fs from 'node:fs'
import t, { type Test } from 'tap'
import type { Mail } from '../../src/domain/mail.js'
import { FileTransport } from '../../src/mail/fileTransport.js'
import type { MailTransport } from '../../src/mail/mailTransport.js'
import { MAX_PENDING_MAILS, Outbox } from '../../src/mail/outbox.js'
import { parseMail } from '../helpers/mail.js'
import { tempDataDir } from '../helpers/server.js'

const mail: Mail = { to: 'ann@outbox.test', subject: 'Hello', text: `${'Confirmation id: abc-123\nA long line '.padEnd(200, 'x')}\n` }

function captureErrors(t: Test): string[] {
  const errors: string[] = []
  const original = console.error
  console.error = (...args: unknown[]) => void errors.push(args.map(String).join(' '))
  t.teardown(() => (console.error = original))
  return errors
}

t.test('the file transport writes an .eml and the outbox logs its path', async (t) => {
  const dataDir = tempDataDir('outbox')
  const lines: string[] = []
  const outbox = new Outbox(new FileTransport(dataDir, 'Ledger <ledger@outbox.test>'), (line) => lines.push(line))
  outbox.send(mail)
  await outbox.close()
  t.equal(outbox.delivered, 1)
  const match = /^mail to ann@outbox\.test \('Hello'\) written to (.+\.eml)$/.exec(lines[0] ?? '')
  t.ok(match, `the path is logged: ${lines[0]}`)
  const file = match?.[1] as string
  t.equal(fs.statSync(file).mode & 0o777, 0o600, 'readable by the server user only')
  const parsed = parseMail(fs.readFileSync(file, 'utf8'))
  t.same(parsed, { to: 'ann@outbox.test', subject: 'Hello', text: mail.text }, 'a complete message, the text intact')
  t.match(fs.readFileSync(file, 'utf8'), /^From: Ledger <ledger@outbox\.test>\r?$/m, 'from MAIL_FROM')
  t.same(
    fs.readdirSync(`${dataDir}/outbox`).filter((name) => !name.endsWith('.eml')),
    [],
    'no temporary file left',
  )
})

t.test('deliveries are bounded, failures are logged and counted, close waits', async (t) => {
  const errors = captureErrors(t)
  const waiting: (() => void)[] = []
  const slow: MailTransport = {
    deliver: () => new Promise<string>((resolve) => waiting.push(() => resolve('delivered'))),
    close: () => undefined,
  }
  const outbox = new Outbox(slow, null)
  for (let index = 0; index < MAX_PENDING_MAILS; index += 1) outbox.send(mail)
  t.equal(outbox.pendingCount, MAX_PENDING_MAILS)
  outbox.send(mail)
  t.equal(outbox.pendingCount, MAX_PENDING_MAILS, 'one more is not queued')
  t.equal(outbox.failed, 1)
  t.match(errors[0], /not sent: 1000 mails are already waiting/)
  let closed = false
  const closing = outbox.close().then(() => (closed = true))
  await new Promise((resolve) => setImmediate(resolve))
  t.notOk(closed, 'close waits for the deliveries under way')
  for (const release of waiting) release()
  await closing
  t.equal(outbox.delivered, MAX_PENDING_MAILS)
  t.equal(outbox.pendingCount, 0)

  const failing = new Outbox({ deliver: () => Promise.reject(new Error('connection refused')), close: () => undefined }, null)
  failing.send(mail)
  await failing.close()
  t.equal(failing.failed, 1)
  t.match(errors.at(-1), /mail to ann@outbox\.test \('Hello'\) could not be sent: connection refused/)
})
