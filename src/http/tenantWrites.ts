/*
 * Writes a public call makes in tenants it found through a global index
 * (the two steps of a password change by e-mail: every tenant holding the
 * address, every tenant holding the confirmation). In the embedded default
 * each is the tenant actor's write. In cluster mode a tenant may be held by
 * another node, and the public call cannot be forwarded whole (its tenants
 * may live on several nodes): each write is then sent by name, with JSON
 * arguments, to the node holding that tenant, on its internal listener
 *
 *   POST /cluster/tenants/<tenant>/writes/<name>   body: the arguments
 *
 * which runs the same named write there and answers its JSON result. The
 * writes are declared once, here; a name the table does not hold is 404.
 * It is one of the cluster's own calls: it carries the node credential
 * (clusterCredentials.ts), which a request forwarded for a client never
 * carries, so no client's request can reach it.
 */
import { changePassword, confirmByEmail } from '../domain/operations/passwordChange.js'
import { ApiError } from '../domain/errors.js'
import type { Tx } from '../domain/tx.js'
import { TenantElsewhere } from '../tenants/tenantErrors.js'
import type { Services } from './call.js'
import { plainErrorResponse, type ApiResponse } from './response.js'

type NamedWrite = (tx: Tx, args: Record<string, unknown>) => unknown

const text = (value: unknown): string => (typeof value === 'string' ? value : '')

const TENANT_WRITES = {
  confirmByEmail: (tx, args) => confirmByEmail(tx, text(args.email), text(args.confirmationId), Number(args.lifetimeMs)),
  changePassword: (tx, args) => changePassword(tx, text(args.hash), text(args.passwordHash)),
} satisfies Record<string, NamedWrite>

export type TenantWriteName = keyof typeof TENANT_WRITES

/** The path of the call on the internal listener (cluster/clusterCalls.ts). */
export const TENANT_WRITE_CALL = 'cluster/tenants/:tenant/writes/:name'

/**
 * Runs the named write in the tenant, here or on the node holding it; undefined for a tenant that does not exist.
 * `forwarded`: the call came from another node, so it is not sent on again.
 */
export async function writeInTenant(services: Services, tenant: string, name: TenantWriteName, args: Record<string, unknown>, forwarded = false): Promise<unknown> {
  try {
    const actor = await services.registry.open(tenant)
    return await actor?.write((tx) => TENANT_WRITES[name](tx, args))
  } catch (error) {
    if (!(error instanceof TenantElsewhere) || services.forwarder === null || forwarded) throw error
    return services.forwarder.writeElsewhere(error.nodeUrl, tenant, name, args)
  }
}

/** The internal listener's side: the write `name` in `tenant`, with the body as its arguments. */
export function tenantWriteCall(services: Services, tenant: string, name: string): (body: Buffer) => Promise<ApiResponse> {
  return async (body) => {
    if (!Object.hasOwn(TENANT_WRITES, name)) return plainErrorResponse(new ApiError('TL01-9003', `no tenant write '${name}'`))
    let args: Record<string, unknown>
    try {
      args = JSON.parse(body.toString('utf8')) as Record<string, unknown>
    } catch {
      return plainErrorResponse(new ApiError('TL01-9002', 'the arguments of a tenant write are a JSON object'))
    }
    const result = await writeInTenant(services, tenant, name as TenantWriteName, args, true)
    return { status: 200, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ result: result ?? null, found: result !== undefined }) }
  }
}
