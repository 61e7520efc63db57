/*
 * The signature of a webhook POST (Stripe's scheme): the header
 *
 *   X-TimeLedger-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>
 *
 * The receiver recomputes the HMAC over the raw body bytes it got, compares
 * it in constant time, and refuses a `t` too far from its clock (a replayed
 * request). README "Webhooks" shows the receiver's side.
 */
import crypto from 'node:crypto'

export const SIGNATURE_HEADER = 'X-TimeLedger-Signature'

function hmacHex(secret: string, timestamp: number, body: string | Buffer): string {
  return crypto.createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex')
}

/** The header's value for `body` signed at `timestamp` (unix seconds). */
export function signatureHeader(secret: string, body: string | Buffer, timestamp: number): string {
  return `t=${timestamp},v1=${hmacHex(secret, timestamp, body)}`
}

/** Whether `header` signs `body` with `secret`, made within `toleranceS` of `nowS` (the receiver's check). */
export function verifySignature(secret: string, body: string | Buffer, header: string, nowS: number, toleranceS = 300): boolean {
  const parts = new Map(header.split(',').map((part) => part.trim().split('=', 2) as [string, string]))
  const timestamp = Number(parts.get('t'))
  const given = parts.get('v1') ?? ''
  if (!Number.isSafeInteger(timestamp) || Math.abs(nowS - timestamp) > toleranceS || !/^[0-9a-f]{64}$/.test(given)) return false
  return crypto.timingSafeEqual(Buffer.from(hmacHex(secret, timestamp, body), 'hex'), Buffer.from(given, 'hex'))
}
