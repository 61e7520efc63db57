/*
 * Delivery over SMTP with nodemailer, when SMTP_URL is set
 * (`smtp://user:pass@host:587`, `smtps://…:465`). One connection at a
 * time, opened per mail, with bounded waits; nodemailer
 * upgrades to TLS when the server offers STARTTLS. The URL may carry
 * credentials, so it is never logged.
 */
import nodemailer, { type Transporter } from 'nodemailer'
import SMTPTransport from 'nodemailer/lib/smtp-transport/index.js'
import type { Mail } from '../domain/mail.js'
import type { MailTransport } from './mailTransport.js'

/** Bounds on one delivery, so a mail server that hangs never holds a mail (and shutdown) for long. */
const CONNECTION_TIMEOUT_MS = 10_000
const SOCKET_TIMEOUT_MS = 30_000

export class SmtpTransport implements MailTransport {
  private readonly transporter: Transporter

  constructor(
    url: string,
    private readonly from: string,
  ) {
    // SMTPTransport merges `url` with the other options (createTransport given a URL would drop them).
    this.transporter = nodemailer.createTransport(new SMTPTransport({ url, connectionTimeout: CONNECTION_TIMEOUT_MS, greetingTimeout: CONNECTION_TIMEOUT_MS, socketTimeout: SOCKET_TIMEOUT_MS }))
  }

  async deliver(mail: Mail): Promise<string> {
    const info = await this.transporter.sendMail({ from: this.from, to: mail.to, subject: mail.subject, text: mail.text })
    return `sent over SMTP (${String(info.messageId)})`
  }

  close(): void {
    this.transporter.close()
  }
}
