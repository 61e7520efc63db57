/*
 * The one guard of the calls that need a signed-in user: a call on a tenant
 * address whose access token authenticate.ts has checked carries the tenant
 * and its principal; any other call is refused with 400 TL01-1002, the same
 * refusal authenticate.ts gives when the request names no token at all.
 * The tenant it hands out writes as the principal (actingTenant.ts), so
 * each write's log entry says who made it.
 */
import { ApiError } from '../domain/errors.js'
import { ActingTenant } from './actingTenant.js'
import type { Call, Principal, TenantAccess } from './call.js'

export interface Session {
  readonly tenant: TenantAccess
  readonly principal: Principal
}

/** 400 TL01-1002; `hint` says where the token goes, when that helps. */
export function accessTokenRequired(hint = ''): ApiError {
  return new ApiError('TL01-1002', `an access token is required${hint}`)
}

export function requireSession(call: Call): Session {
  if (call.tenant === null || call.principal === null) throw accessTokenRequired()
  return { tenant: new ActingTenant(call.tenant, call.principal.userId), principal: call.principal }
}
