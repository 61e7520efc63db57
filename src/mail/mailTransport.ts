/*
 * The port through which the outbox (outbox.ts) hands a mail to the world.
 * Two transports implement it: `.eml` files under DATA_DIR/outbox/
 * (fileTransport.ts, the embedded default) and SMTP (smtpTransport.ts).
 */
import type { Mail } from '../domain/mail.js'

export interface MailTransport {
  /** Delivers one mail; resolves with a few words saying where it went (a file path, a message id). */
  deliver(mail: Mail): Promise<string>
  close(): void
}
