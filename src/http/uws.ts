/*
 * Loads the native uWebSockets.js build directly. The package quietly falls
 * back to a slow `ws`-based server when its binary does not load; we refuse
 * to start instead (ARCHITECTURE.md §7).
 *
 * uWS listens with SO_REUSEPORT unless told otherwise: a second server
 * started on the same port (another DATA_DIR, a forgotten old process)
 * would bind without error and the kernel would hand it part of the
 * connections. listenExclusive asks for the port alone
 * (LIBUS_LISTEN_EXCLUSIVE_PORT), so the second server fails to listen and
 * says so, and the first keeps every connection.
 */
import { createRequire } from 'node:module'
import type * as UwsTypes from 'uWebSockets.js'
import { portTakenMessage } from './portTaken.js'

export type Uws = typeof UwsTypes
export type { HttpRequest, HttpResponse, TemplatedApp, us_socket_context_t } from 'uWebSockets.js'

export function loadNativeUws(): Uws {
  const require = createRequire(import.meta.url)
  const binary = `uWebSockets.js/binaries/uws_${process.platform}_${process.arch}_${process.versions.modules}.node`
  try {
    return require(binary) as Uws
  } catch (error) {
    throw new Error(`the native uWebSockets.js build for this platform (${binary}) did not load: ${error instanceof Error ? error.message : String(error)}`)
  }
}

type ListenWithOptions = (host: string, port: number, options: number, cb: (socket: UwsTypes.us_listen_socket | false) => void) => UwsTypes.TemplatedApp

/**
 * Listens on host:port with the port to itself; rejects with a message naming the port and `setting` (the
 * variable that chose it) when the port is taken or not allowed (uWS does not say which).
 */
export function listenExclusive(uws: Uws, app: UwsTypes.TemplatedApp, host: string, port: number, setting: string): Promise<UwsTypes.us_listen_socket> {
  // The typings know the option only as an enum member and this overload not at all; the build exports both.
  const exclusive = (uws as unknown as { LIBUS_LISTEN_EXCLUSIVE_PORT?: unknown }).LIBUS_LISTEN_EXCLUSIVE_PORT
  if (typeof exclusive !== 'number') return Promise.reject(new Error('this uWebSockets.js build has no exclusive listen option (LIBUS_LISTEN_EXCLUSIVE_PORT)'))
  return new Promise((resolve, reject) => {
    ;(app.listen as unknown as ListenWithOptions).call(app, host, port, exclusive, (socket) => {
      if (socket === false) reject(new Error(portTakenMessage(host, port, setting)))
      else resolve(socket)
    })
  })
}
