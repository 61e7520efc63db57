/*
 * The one rule for a tenant's name, which is its host name (`<tenant>.<BASE_DOMAIN>`) and the Account's
 * `urlPrefix`: the Account's pattern (lower-case letters, digits and '-', not at either end), at most
 * TENANT_NAME_MAX_LENGTH characters (one DNS label), and none of the names the service keeps for itself.
 * Sign-up (http/routes/registration.ts) and import (tenants/tenantTransfer.ts) both ask it. A name longer than
 * that (a Host label, a `checkurl?url=`) is never looked up: it is a key of the tenant directory, and LMDB keys
 * have a size limit (fitsTenantName).
 */
import { URL_PREFIX_PATTERN } from './resources/account.js'

export const TENANT_NAME_MAX_LENGTH = 63

export const RESERVED_TENANTS = new Set(['www', 'api', 'admin', 'mail', 'static'])

const TENANT_NAME = new RegExp(`^${URL_PREFIX_PATTERN}$`)

/**
 * Whether a name is short enough to be a tenant's: what the tenant directory (a key of the LMDB or PostgreSQL store)
 * is ever asked about; a longer one names no tenant.
 */
export function fitsTenantName(name: string): boolean {
  return name.length > 0 && name.length <= TENANT_NAME_MAX_LENGTH
}

export function isValidTenantName(name: string): boolean {
  return name.length <= TENANT_NAME_MAX_LENGTH && TENANT_NAME.test(name) && !RESERVED_TENANTS.has(name)
}
