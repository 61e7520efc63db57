/*
 * The operator CLI's side of the admin listener: when a running server holds
 * the data directory, commands that change a tenant ask that server instead
 * of writing the files themselves. The port is ADMIN_PORT and the key is
 * ADMIN_KEY or the one the server keeps in DATA_DIR/admin-key, so the CLI
 * run with the server's environment finds both.
 *
 * The work is asked for with `Accept: application/x-ndjson`: the server
 * answers JSON lines as it goes, `{"progress": text}` then one
 * `{"result": {...}}` or `{"error": {...}}`; see restoreRoute.ts.
 */
import fs from 'node:fs'
import http from 'node:http'
import type { Config } from '../config.js'
import { adminKeyFile } from './adminKey.js'
import { ADMIN_HOST } from './adminServer.js'

export class AdminCallError extends Error {}

function adminKeyOf(config: Config): string {
  if (config.adminKey !== null) return config.adminKey
  try {
    return fs.readFileSync(adminKeyFile(config.dataDir), 'utf8').trim()
  } catch {
    throw new AdminCallError(`no admin key: set ADMIN_KEY, or run as a user who can read ${adminKeyFile(config.dataDir)}`)
  }
}

function failure(status: number, json: Record<string, unknown>, text: string): AdminCallError {
  return new AdminCallError(`the server answered ${status}${typeof json.code === 'string' ? ` ${json.code}` : ''}: ${String(json.message ?? text)}`)
}

function parseJson(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text)
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : { message: text }
  } catch {
    return { message: text }
  }
}

/** Sends the request; the answer goes to `onResponse`, a failure to reach the listener to `onError`. */
function send(
  config: Config,
  request: { method: string; path: string; body: unknown; accept: string },
  onResponse: (response: http.IncomingMessage) => void,
  onError: (error: AdminCallError) => void,
): void {
  if (config.adminPort === 0) throw new AdminCallError('ADMIN_PORT is 0 here; set it to the running server\'s admin port')
  const payload = Buffer.from(JSON.stringify(request.body))
  const headers = { authorization: `Bearer ${adminKeyOf(config)}`, 'content-type': 'application/json', 'content-length': String(payload.length), accept: request.accept }
  const sent = http.request({ host: ADMIN_HOST, port: config.adminPort, method: request.method, path: request.path, headers, agent: false }, onResponse)
  sent.on('error', (error) => onError(new AdminCallError(`cannot reach the admin listener on ${ADMIN_HOST}:${config.adminPort}: ${error.message}`)))
  sent.end(payload)
}

/**
 * Sends a JSON body to the admin listener for work that reports progress: each progress line goes to `onProgress` as
 * it arrives; resolves with the result, throws the error message otherwise.
 */
export function callAdminWithProgress(
  config: Config,
  method: string,
  path: string,
  body: unknown,
  onProgress: (line: string) => void,
): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const onResponse = (response: http.IncomingMessage) => {
      const status = response.statusCode ?? 0
      let text = ''
      let outcome: { result: Record<string, unknown> } | { error: AdminCallError } | null = null
      const takeLine = (line: string) => {
        if (line.trim() === '') return
        const json = parseJson(line)
        if (typeof json.progress === 'string') onProgress(json.progress)
        else if (typeof json.result === 'object' && json.result !== null) outcome = { result: json.result as Record<string, unknown> }
        else if (typeof json.error === 'object' && json.error !== null) {
          const error = json.error as Record<string, unknown>
          outcome = { error: failure(typeof error.status === 'number' ? error.status : status, error, line) }
        }
      }
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => {
        text += chunk
        if (status < 200 || status >= 300) return
        let end: number
        while ((end = text.indexOf('\n')) >= 0) {
          takeLine(text.slice(0, end))
          text = text.slice(end + 1)
        }
      })
      response.on('error', reject)
      response.on('end', () => {
        if (status < 200 || status >= 300) return reject(failure(status, parseJson(text), text))
        takeLine(text)
        const last = outcome as { result: Record<string, unknown> } | { error: AdminCallError } | null
        if (last === null) reject(new AdminCallError('the admin listener ended its answer without a result'))
        else if ('error' in last) reject(last.error)
        else resolve(last.result)
      })
    }
    send(config, { method, path, body, accept: 'application/x-ndjson' }, onResponse, reject)
  })
}
