/*
 * The mails the service sends, decided here and delivered by the outbox
 * (src/mail/outbox.ts) once the write that made them is durable. A mail
 * that carries a secret (a password-change confirmation id) is the only way
 * that secret leaves the server when the caller is not the user themself
 * (ARCHITECTURE.md §9): whoever holds an API key and an e-mail address gets an empty
 * 202, the owner of the mailbox gets the id. Texts are plain ASCII, one
 * fact per line, so a mail client shows them as they are.
 */

export interface Mail {
  readonly to: string
  readonly subject: string
  readonly text: string
}

const HOUR_MS = 60 * 60 * 1000

function lifetimeText(lifetimeMs: number): string {
  if (lifetimeMs >= HOUR_MS && lifetimeMs % HOUR_MS === 0) return `${lifetimeMs / HOUR_MS} hour${lifetimeMs === HOUR_MS ? '' : 's'}`
  return `${Math.max(1, Math.round(lifetimeMs / 60_000))} minute(s)`
}

/** Step 1 of a password change for a user who did not ask with their own session: the id goes to their mailbox. */
export function passwordChangeMail(to: string, confirmationId: string, publicUrl: string, lifetimeMs: number): Mail {
  return {
    to,
    subject: 'Your TimeLedger password change',
    text: [
      'Someone asked to change the password of the TimeLedger user with this e-mail address.',
      'If it was not you, ignore this mail: nothing changes.',
      '',
      `Confirmation id: ${confirmationId}`,
      '',
      `It works once, for ${lifetimeText(lifetimeMs)}. To set the new password, send`,
      `POST ${publicUrl}/auth/confirm/${confirmationId}?apikey=<API key>`,
      'with the header Authorization: Basic base64(":<new password>").',
      'Every session and secret key of the user ends with the change.',
      '',
    ].join('\n'),
  }
}

/** Sign-up of a new account: the owner confirms it with the account id (the one sign-up answers). */
export function signUpMail(to: string, accountId: string, tenantUrl: string, lifetimeMs: number): Mail {
  return {
    to,
    subject: 'Confirm your TimeLedger account',
    text: [
      `A TimeLedger account at ${tenantUrl} was signed up with this e-mail address as its owner.`,
      'If it was not you, ignore this mail: an account nobody confirms expires, and its address and e-mail are free again.',
      '',
      `Account id: ${accountId}`,
      '',
      `Confirm it within ${lifetimeText(lifetimeMs)} with`,
      `POST ${tenantUrl}/auth/confirm/${accountId}?apikey=<API key>`,
      '',
    ].join('\n'),
  }
}
