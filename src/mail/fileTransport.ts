/*
 * The embedded default transport: each mail is composed by nodemailer (a
 * complete RFC 5322 message, as SMTP would carry it) and written as one
 * `.eml` file under DATA_DIR/outbox/, first to a temporary name and then
 * renamed, so a reader never sees half a mail. Names start with the time
 * and a sequence number of this process, so they sort in sending order.
 * The outbox logs each path; any mail client opens the file.
 */
import fs from 'node:fs/promises'
import path from 'node:path'
import nodemailer from 'nodemailer'
import type { Mail } from '../domain/mail.js'
import type { MailTransport } from './mailTransport.js'

export class FileTransport implements MailTransport {
  readonly dir: string
  private readonly composer = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' })
  private sequence = 0

  constructor(
    dataDir: string,
    private readonly from: string,
  ) {
    this.dir = path.join(dataDir, 'outbox')
  }

  async deliver(mail: Mail): Promise<string> {
    const info = await this.composer.sendMail({ from: this.from, to: mail.to, subject: mail.subject, text: mail.text })
    const message = info.message as Buffer
    this.sequence += 1
    const stamp = new Date().toISOString().replace(/[:.]/g, '-')
    const name = `${stamp}-${String(this.sequence).padStart(6, '0')}-${process.pid}.eml`
    await fs.mkdir(this.dir, { recursive: true, mode: 0o700 })
    const file = path.join(this.dir, name)
    const temporary = `${file}.tmp`
    await fs.writeFile(temporary, message, { mode: 0o600 })
    await fs.rename(temporary, file)
    return `written to ${file}`
  }

  close(): void {
    this.composer.close()
  }
}
