/*
 * The start-up error of a listener whose port cannot be had, the same for
 * both (the API on uWebSockets.js, uws.ts; the admin listener on Node's
 * http, admin/adminServer.ts): both listen on their port alone, so a port
 * that another process holds is refused rather than shared, and the
 * message names the setting that chose it.
 */

/** The start-up error for a port that cannot be had. */
export function portTakenMessage(host: string, port: number, setting: string): string {
  return `cannot listen on ${host}:${port}: the port is in use (is another TimeLedger already running on it?) or not allowed to this user; stop the other process or set ${setting} to a free port`
}
