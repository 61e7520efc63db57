/*
 * Loads the native uWebSockets.js build directly. The package quietly falls
 * back to a slow `ws`-based server when its binary does not load; we refuse
 * to start instead (design §7).
 */
import { createRequire } from 'node:module'
import type * as UwsTypes from 'uWebSockets.js'

export type Uws = typeof UwsTypes
export type { HttpRequest, HttpResponse, TemplatedApp, us_listen_socket } from 'uWebSockets.js'

export function loadNativeUws(): Uws {
  const require = createRequire(import.meta.url)
  const binary = `uWebSockets.js/binaries/uws_${process.platform}_${process.arch}_${process.versions.modules}.node`
  try {
    return require(binary) as Uws
  } catch (error) {
    throw new Error(`the native uWebSockets.js build for this platform (${binary}) did not load: ${error instanceof Error ? error.message : String(error)}`)
  }
}
