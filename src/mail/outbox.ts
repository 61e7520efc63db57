/*
 * The outbox: the port through which the service sends mail, and the queue
 * in front of it. A route hands a mail to `send` only after the write that
 * decided it is durable (its `tenant.write` resolved), so no mail ever goes
 * out for a write the log did not take. Delivery then runs in the
 * background: the answer does not wait for a mail server, and a delivery
 * that fails is logged and dropped, never taking the write or the process
 * with it (the user asks again; mails carry secrets, so they are not kept
 * in the log to be retried after a crash). At most MAX_PENDING_MAILS are in
 * flight; past that a mail is refused with a log line rather than queued
 * without bound. `close` waits for the deliveries under way (shutdown).
 *
 * Two transports implement the port (mailTransport.ts): SMTP through
 * nodemailer when SMTP_URL is set (smtpTransport.ts), otherwise one `.eml`
 * file per mail under DATA_DIR/outbox/ (fileTransport.ts), the embedded
 * default, which a developer opens like a mail catcher.
 */
import type { Config } from '../config.js'
import type { Mail } from '../domain/mail.js'
import { FileTransport } from './fileTransport.js'
import type { MailTransport } from './mailTransport.js'
import { SmtpTransport } from './smtpTransport.js'

export const MAX_PENDING_MAILS = 1000

export class Outbox {
  private readonly pending = new Set<Promise<void>>()
  /** Mails delivered and mails that failed or were refused since start. */
  delivered = 0
  failed = 0

  constructor(
    private readonly transport: MailTransport,
    private readonly say: ((line: string) => void) | null,
  ) {}

  /** Queues a mail whose write is durable; never throws. */
  send(mail: Mail): void {
    if (this.pending.size >= MAX_PENDING_MAILS) {
      this.failed += 1
      console.error(`mail to ${mail.to} ('${mail.subject}') not sent: ${MAX_PENDING_MAILS} mails are already waiting for delivery`)
      return
    }
    const delivery = this.transport.deliver(mail).then(
      (where) => {
        this.delivered += 1
        this.say?.(`mail to ${mail.to} ('${mail.subject}') ${where}`)
      },
      (error: unknown) => {
        this.failed += 1
        console.error(`mail to ${mail.to} ('${mail.subject}') could not be sent: ${error instanceof Error ? error.message : String(error)}`)
      },
    )
    const tracked = delivery.finally(() => this.pending.delete(tracked))
    this.pending.add(tracked)
  }

  /** Mails handed over and not yet delivered or failed. */
  get pendingCount(): number {
    return this.pending.size
  }

  /** Waits for the deliveries under way, then closes the transport. */
  async close(): Promise<void> {
    await Promise.allSettled([...this.pending])
    this.transport.close()
  }
}

function mailSender(config: Config): string {
  return config.mailFrom ?? `TimeLedger <no-reply@${config.baseDomain}>`
}

/** The outbox the configuration asks for: SMTP when SMTP_URL is set, else `.eml` files in DATA_DIR/outbox. */
export function outboxFor(config: Config): Outbox {
  const from = mailSender(config)
  const transport = config.smtpUrl === null ? new FileTransport(config.dataDir, from) : new SmtpTransport(config.smtpUrl, from)
  return new Outbox(transport, config.quiet ? null : (line) => console.log(line))
}
