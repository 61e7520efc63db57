/*
 * Requests to the admin listener (127.0.0.1, `Authorization: Bearer <key>`),
 * and reading the admin key a server generated in its data directory.
 */
import fs from 'node:fs'
import http from 'node:http'
import path from 'node:path'

export interface AdminAnswer {
  status: number
  headers: http.IncomingHttpHeaders
  text: string
}

export function adminKeyOf(dataDir: string): string {
  return fs.readFileSync(path.join(dataDir, 'admin-key'), 'utf8').trim()
}

export function adminRequest(port: number, method: string, requestPath: string, key: string | null, body?: string): Promise<AdminAnswer> {
  const headers: Record<string, string> = {}
  if (key !== null) headers.authorization = `Bearer ${key}`
  if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body))
  return new Promise((resolve, reject) => {
    const request = http.request({ host: '127.0.0.1', port, method, path: requestPath, headers, agent: false }, (response) => {
      const chunks: Buffer[] = []
      response.on('data', (chunk: Buffer) => chunks.push(chunk))
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, text: Buffer.concat(chunks).toString('utf8') }))
      response.on('error', reject)
    })
    request.setTimeout(30_000, () => request.destroy(new Error(`admin ${method} ${requestPath} timed out`)))
    request.on('error', reject)
    if (body !== undefined) request.write(body)
    request.end()
  })
}
