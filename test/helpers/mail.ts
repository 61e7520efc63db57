/*
 * Reading the mails the server sent, for tests: the `.eml` files of the file
 * outbox under DATA_DIR/outbox (the default without SMTP_URL), or raw
 * messages caught by an smtp-server sink. A message is parsed just enough:
 * the To and Subject headers and the text body, decoded from
 * quoted-printable or base64 as nodemailer wrote it.
 */
import fs from 'node:fs'
import path from 'node:path'
import type { TestClient } from './http.js'
import { sleep } from './identity.js'

export interface SentMail {
  to: string
  subject: string
  text: string
}

function header(head: string, name: string): string {
  const unfolded = head.replace(/\r?\n[ \t]+/g, ' ')
  const line = unfolded.split(/\r?\n/).find((candidate) => candidate.toLowerCase().startsWith(`${name.toLowerCase()}:`))
  return line === undefined ? '' : line.slice(name.length + 1).trim()
}

function decodeQuotedPrintable(text: string): string {
  const bytes = text.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/gi, (_match, hex: string) => String.fromCharCode(parseInt(hex, 16)))
  return Buffer.from(bytes, 'latin1').toString('utf8')
}

/** To, Subject and the decoded text of one RFC 5322 message. */
export function parseMail(raw: string): SentMail {
  const split = raw.search(/\r?\n\r?\n/)
  const head = raw.slice(0, split)
  const body = raw.slice(split).replace(/^\r?\n\r?\n/, '')
  const encoding = header(head, 'Content-Transfer-Encoding').toLowerCase()
  const text = encoding === 'quoted-printable' ? decodeQuotedPrintable(body) : encoding === 'base64' ? Buffer.from(body, 'base64').toString('utf8') : body
  return { to: header(head, 'To'), subject: header(head, 'Subject'), text: text.replace(/\r\n/g, '\n') }
}

/** Every mail of the file outbox, in the order sent (file names start with the time and a sequence number). */
function outboxMails(dataDir: string): (SentMail & { file: string })[] {
  const dir = path.join(dataDir, 'outbox')
  if (!fs.existsSync(dir)) return []
  return fs
    .readdirSync(dir)
    .filter((name) => name.endsWith('.eml'))
    .sort()
    .map((name) => ({ file: path.join(dir, name), ...parseMail(fs.readFileSync(path.join(dir, name), 'utf8')) }))
}

/** The mails to one address so far. */
export function mailsTo(dataDir: string, address: string): SentMail[] {
  return outboxMails(dataDir).filter((mail) => mail.to.toLowerCase() === address.toLowerCase())
}

/** Waits (delivery runs after the answer) until `count` mails to the address are in the outbox; the newest. */
export async function waitForMail(dataDir: string, address: string, count = 1, timeoutMs = 10_000): Promise<SentMail> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const mails = mailsTo(dataDir, address)
    if (mails.length >= count) return mails[mails.length - 1] as SentMail
    if (Date.now() > deadline) throw new Error(`no mail #${count} to ${address} in ${dataDir}/outbox within ${timeoutMs} ms (found ${mails.length})`)
    await sleep(20)
  }
}

/** The password-change confirmation id a mail carries. */
export function confirmationIdIn(mail: SentMail): string {
  const match = /^Confirmation id: (\S+)$/m.exec(mail.text)
  if (match === null) throw new Error(`no confirmation id in the mail to ${mail.to}:\n${mail.text}`)
  return match[1] as string
}

/** The account id a sign-up mail carries. */
export function accountIdIn(mail: SentMail): string {
  const match = /^Account id: (\S+)$/m.exec(mail.text)
  if (match === null) throw new Error(`no account id in the mail to ${mail.to}:\n${mail.text}`)
  return match[1] as string
}

/**
 * Asks for a password change by e-mail (public step 1) and returns the confirmation id from the mail it
 * sends; throws unless the answer is 202.
 */
export async function requestConfirmationByMail(client: TestClient, dataDir: string, email: string): Promise<string> {
  const before = mailsTo(dataDir, email).length
  const request = await client.request('POST', '/v1/users/requestconfirmation', { query: { apikey: client.apiKey, email } })
  if (request.status !== 202) throw new Error(`requestconfirmation failed: ${request.status} ${request.text}`)
  return confirmationIdIn(await waitForMail(dataDir, email, before + 1))
}
