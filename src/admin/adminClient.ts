/*
 * The operator CLI's side of the admin listener: when a running server holds
 * the data directory, commands that change a tenant ask that server instead
 * of writing the files themselves. The port is ADMIN_PORT and the key is
 * ADMIN_KEY or the one the server keeps in DATA_DIR/admin-key, so the CLI
 * run with the server's environment finds both.
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

/** Sends a JSON body to the admin listener; resolves with the JSON answer of a 2xx, throws the error message otherwise. */
export function callAdmin(config: Config, method: string, path: string, body: unknown): Promise<Record<string, unknown>> {
  if (config.adminPort === 0) throw new AdminCallError('ADMIN_PORT is 0 here; set it to the running server\'s admin port')
  const payload = Buffer.from(JSON.stringify(body))
  const headers = { authorization: `Bearer ${adminKeyOf(config)}`, 'content-type': 'application/json', 'content-length': String(payload.length) }
  return new Promise((resolve, reject) => {
    const request = http.request({ host: ADMIN_HOST, port: config.adminPort, method, path, headers, agent: false }, (response) => {
      const chunks: Buffer[] = []
      response.on('data', (chunk: Buffer) => chunks.push(chunk))
      response.on('error', reject)
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8')
        let json: Record<string, unknown> = {}
        try {
          json = JSON.parse(text) as Record<string, unknown>
        } catch {
          json = { message: text }
        }
        const status = response.statusCode ?? 0
        if (status >= 200 && status < 300) resolve(json)
        else reject(new AdminCallError(`the server answered ${status}${typeof json.code === 'string' ? ` ${json.code}` : ''}: ${String(json.message ?? text)}`))
      })
    })
    request.on('error', (error) => reject(new AdminCallError(`cannot reach the admin listener on ${ADMIN_HOST}:${config.adminPort}: ${error.message}`)))
    request.end(payload)
  })
}
