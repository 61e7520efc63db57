/*
 * What the head of every answer of both listeners says (the API on
 * uWebSockets.js, server.ts; the admin listener on Node's http,
 * admin/adminServer.ts): the reason phrase of its status, and
 * `X-Content-Type-Options: nosniff`, so that no browser guesses a type
 * other than the one sent. uWS takes the status as one line (`200 OK`),
 * made once per status and kept.
 */
import { STATUS_CODES } from 'node:http'

/** Headers every answer carries. */
export const ALWAYS_HEADERS: Readonly<Record<string, string>> = { 'X-Content-Type-Options': 'nosniff' }

/** The reason phrase of a status (`Not Found`). */
export function statusText(status: number): string {
  return STATUS_CODES[status] ?? 'Unknown'
}

/** Status lines by status, made on first use. */
const statusLines: string[] = []

/** The status as uWS writes it: `404 Not Found`. */
export function statusLine(status: number): string {
  let line = statusLines[status]
  if (line === undefined) {
    line = `${status} ${statusText(status)}`
    statusLines[status] = line
  }
  return line
}
