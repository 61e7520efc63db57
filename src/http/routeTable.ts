/*
 * The fixed routes of the service (everything that is not a declared
 * resource path). `scope` says whether a route lives on the public URL or
 * a tenant URL; `auth` whether it needs an access token. Path patterns
 * match segment by segment; `:name` captures one segment.
 */
import type { Call } from './call.js'
import type { ApiResponse } from './response.js'
import { login, logout, refresh } from './routes/auth.js'
import { runBatch } from './routes/batch.js'
import { report } from './routes/reports.js'
import { checkEmail, checkUrl, confirmAccount, findUrl, signUp } from './routes/registration.js'
import { ApiError } from '../domain/errors.js'

export interface Route {
  method: string
  scope: 'public' | 'tenant'
  pattern: string
  auth: boolean
  handle(call: Call, params: Record<string, string>): Promise<ApiResponse>
}

async function confirm(call: Call, params: Record<string, string>): Promise<ApiResponse> {
  const id = params.id ?? ''
  const answer = await confirmAccount(call, id)
  if (answer === null) throw new ApiError('TL01-1006', `confirmation id '${id}' is invalid`)
  return answer
}

export const ROUTES: readonly Route[] = [
  { method: 'GET', scope: 'public', pattern: 'register/checkurl', auth: false, handle: checkUrl },
  { method: 'GET', scope: 'public', pattern: 'register/checkemail', auth: false, handle: checkEmail },
  { method: 'GET', scope: 'public', pattern: 'register/findurl', auth: false, handle: findUrl },
  { method: 'POST', scope: 'public', pattern: 'register/signup', auth: false, handle: signUp },
  { method: 'POST', scope: 'tenant', pattern: 'auth/confirm/:id', auth: false, handle: confirm },
  { method: 'GET', scope: 'tenant', pattern: 'auth/login', auth: false, handle: login },
  { method: 'GET', scope: 'tenant', pattern: 'auth/refreshtoken', auth: false, handle: refresh },
  { method: 'GET', scope: 'tenant', pattern: 'auth/logout', auth: true, handle: logout },
  { method: 'DELETE', scope: 'tenant', pattern: 'auth/token', auth: true, handle: logout },
  { method: 'POST', scope: 'tenant', pattern: 'batch', auth: true, handle: runBatch },
  { method: 'GET', scope: 'tenant', pattern: 'time/reports/:name', auth: true, handle: report },
]

/** Matches a path against a pattern; the captured segments, or null. */
export function matchPattern(pattern: string, segments: readonly string[]): Record<string, string> | null {
  const parts = pattern.split('/')
  if (parts.length !== segments.length) return null
  const params: Record<string, string> = {}
  for (const [index, part] of parts.entries()) {
    const segment = segments[index] as string
    if (part.startsWith(':')) params[part.slice(1)] = segment
    else if (part !== segment) return null
  }
  return params
}
