/*
 * The operator CLI's side of the admin listener: commands that ask the
 * running server (an online restore, status, metrics) reach it here.
 *
 * Which listener: the one of the server that holds the data directory. Its
 * lock (persist/dataDirLock.ts) names its pid and the admin port it
 * listens on, so the CLI never asks whatever else listens on the ADMIN_PORT
 * of its own environment (another server, on another data directory, once
 * answered a restore with a 401 that named nothing). Only a cluster node,
 * which holds no lock, is found by ADMIN_PORT. The key is ADMIN_KEY or the
 * one the server keeps in DATA_DIR/admin-key.
 *
 * Every error says which address was tried and where its port and key came
 * from, so a refusal or a connection that fails points at the cause.
 *
 * Work that reports progress is asked for with `Accept:
 * application/x-ndjson`: the server answers JSON lines as it goes,
 * `{"progress": text}` then one `{"result": {...}}` or `{"error": {...}}`;
 * see restoreRoute.ts.
 */
import fs from 'node:fs'
import http from 'node:http'
import type { Config } from '../config.js'
import { lockPath, type LockRecord } from '../persist/dataDirLock.js'
import { adminKeyFile } from './adminKey.js'
import { ADMIN_HOST } from './adminServer.js'

class AdminCallError extends Error {}

/** The server holding the data directory has not opened its admin listener yet (its lock names no port so far). */
export class ServerStarting extends AdminCallError {
  constructor(
    readonly pid: number,
    dataDir: string,
  ) {
    super(`the server (pid ${pid}) holding ${dataDir} is starting: its admin listener is not up yet; try again in a moment`)
  }
}

/** The admin listener an operator command talks to, and where its port and key came from (for messages). */
export interface AdminTarget {
  readonly port: number
  /** `http://127.0.0.1:<port>` */
  readonly address: string
  readonly portSource: string
  /** The running server's pid when its lock names it; null for a cluster node found by ADMIN_PORT. */
  readonly pid: number | null
  readonly config: Config
}

/**
 * The admin listener of `server` (the live lock of the data directory), or, with no lock (a cluster node), the one on
 * ADMIN_PORT. A lock that names no admin port yet is a server still starting (ServerStarting); one written by an
 * older version, which never names it, falls back to ADMIN_PORT, and messages say so.
 */
export function adminTarget(config: Config, server: LockRecord | null): AdminTarget {
  const target = (port: number, portSource: string): AdminTarget => ({ port, address: `http://${ADMIN_HOST}:${port}`, portSource, pid: server?.pid ?? null, config })
  if (server?.adminPort != null) return target(server.adminPort, `the admin port the server with pid ${server.pid} wrote into ${lockPath(config.dataDir)}`)
  // A lock of this version names the port as soon as the admin listener is up: until then there is nothing to ask.
  if (server !== null && server.startedAt !== null) throw new ServerStarting(server.pid, config.dataDir)
  const unrecorded = server === null ? '' : `${lockPath(config.dataDir)} (pid ${server.pid}, an older version) names no admin port, so `
  if (config.adminPort === 0) {
    throw new AdminCallError(`${unrecorded}the admin listener cannot be found: ADMIN_PORT is 0 here; set it to the running server's admin port`)
  }
  return target(config.adminPort, `${unrecorded}ADMIN_PORT ${config.adminPort} of this environment`)
}

/** Where the admin key comes from: ADMIN_KEY, else the file the server keeps it in. */
function adminKeySource(config: Config): string {
  return config.adminKey !== null ? 'ADMIN_KEY of this environment' : adminKeyFile(config.dataDir)
}

/** The admin key for `target`; an error naming the address and the file when there is none. */
function adminKeyFor(target: AdminTarget): string {
  const { config } = target
  if (config.adminKey !== null) return config.adminKey
  const file = adminKeyFile(config.dataDir)
  try {
    return fs.readFileSync(file, 'utf8').trim()
  } catch {
    throw new AdminCallError(`no admin key for the admin listener at ${target.address}: set ADMIN_KEY, or run as a user who can read ${file}`)
  }
}

/** An answer that is not a success, as an error naming the address and, for a refused key, where the key came from. */
function failure(target: AdminTarget, status: number, json: Record<string, unknown>, text: string): AdminCallError {
  const code = typeof json.code === 'string' ? ` ${json.code}` : ''
  const sources = [`port: ${target.portSource}`]
  if (status === 401) sources.push(`key: ${adminKeySource(target.config)}`)
  return new AdminCallError(`the admin listener at ${target.address} answered ${status}${code}: ${String(json.message ?? text)} (${sources.join('; ')})`)
}

function parseJson(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text)
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : { message: text }
  } catch {
    return { message: text }
  }
}

interface AdminRequestSpec {
  method: string
  path: string
  body: unknown
  accept: string
  /** Send the admin key (every route but the health checks needs it). */
  withKey: boolean
}

/** Sends the request; the answer goes to `onResponse`, a failure to reach the listener to `onError`. */
function send(target: AdminTarget, request: AdminRequestSpec, onResponse: (response: http.IncomingMessage) => void, onError: (error: AdminCallError) => void): void {
  const key = request.withKey ? adminKeyFor(target) : null
  const payload = request.body === undefined ? Buffer.alloc(0) : Buffer.from(JSON.stringify(request.body))
  const headers: Record<string, string> = { 'content-length': String(payload.length), accept: request.accept }
  if (request.body !== undefined) headers['content-type'] = 'application/json'
  if (key !== null) headers.authorization = `Bearer ${key}`
  const sent = http.request({ host: ADMIN_HOST, port: target.port, method: request.method, path: request.path, headers, agent: false }, onResponse)
  sent.on('error', (error) => onError(new AdminCallError(`cannot reach the admin listener at ${target.address} (${target.portSource}): ${error.message}`)))
  sent.end(payload)
}

interface AdminAnswer {
  status: number
  contentType: string
  text: string
}

/** One request to the admin listener; resolves with any answer (the caller judges its status), rejects when none came. */
function callAdmin(target: AdminTarget, method: string, path: string, options: { withKey?: boolean; accept?: string } = {}): Promise<AdminAnswer> {
  return new Promise((resolve, reject) => {
    const onResponse = (response: http.IncomingMessage) => {
      let text = ''
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => (text += chunk))
      response.on('error', reject)
      response.on('end', () => resolve({ status: response.statusCode ?? 0, contentType: String(response.headers['content-type'] ?? ''), text }))
    }
    try {
      send(target, { method, path, body: undefined, accept: options.accept ?? 'application/json', withKey: options.withKey ?? true }, onResponse, reject)
    } catch (error) {
      reject(error)
    }
  })
}

/** callAdmin for a route that must answer 2xx: the answer's text, or an error naming the address, the status and the message. */
export async function fetchAdmin(target: AdminTarget, path: string, accept = 'application/json'): Promise<string> {
  const answer = await callAdmin(target, 'GET', path, { accept })
  if (answer.status >= 200 && answer.status < 300) return answer.text
  throw failure(target, answer.status, parseJson(answer.text), answer.text)
}

/**
 * Sends a JSON body to the admin listener for work that reports progress: each progress line goes to `onProgress` as
 * it arrives; resolves with the result, throws the error message otherwise.
 */
export function callAdminWithProgress(target: AdminTarget, method: string, path: string, body: unknown, onProgress: (line: string) => void): Promise<Record<string, unknown>> {
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
          outcome = { error: failure(target, typeof error.status === 'number' ? error.status : status, error, line) }
        }
      }
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => {
        text += chunk
        if (status < 200 || status >= 300) return
        for (let end = text.indexOf('\n'); end >= 0; end = text.indexOf('\n')) {
          takeLine(text.slice(0, end))
          text = text.slice(end + 1)
        }
      })
      response.on('error', reject)
      response.on('end', () => {
        if (status < 200 || status >= 300) return reject(failure(target, status, parseJson(text), text))
        takeLine(text)
        const last = outcome as { result: Record<string, unknown> } | { error: AdminCallError } | null
        if (last === null) reject(new AdminCallError(`the admin listener at ${target.address} ended its answer without a result`))
        else if ('error' in last) reject(last.error)
        else resolve(last.result)
      })
    }
    try {
      send(target, { method, path, body, accept: 'application/x-ndjson', withKey: true }, onResponse, reject)
    } catch (error) {
      reject(error)
    }
  })
}
