/*
 * The HTTP answers of the tenant layer's refusals (tenants/tenantErrors.ts):
 * each becomes the ApiError the service has always answered for it, code,
 * status, message and headers. A refusal a retry may cure is 503 TL01-9011
 * with Retry-After (1 s; 60 s for a tenant closed as damaged, which waits
 * for an operator); a file the store can never hold is 413 TL01-1109; a
 * tenant name that exists is 409 TL01-1102; a tenant renamed while the
 * request waited is 401 TL01-1005, as an unknown tenant. Anything else
 * passes through. A restore's failures (restoreErrorAsApiError): a point
 * outside the history or a bad snapshot file is 400 TL01-1105, a log that
 * cannot be replayed to the point 412 TL01-1106.
 */
import { ApiError } from '../domain/errors.js'
import { LogCorruptError, RestorePointError, SnapshotInvalidError } from '../persist/ports.js'
import { RecoveryError } from '../tenants/recovery.js'
import { FileTooLarge, TenantClosed, TenantRenamed, TenantNameTaken, TenantRefusal } from '../tenants/tenantErrors.js'

/** Seconds a client waits before it retries a tenant closed as damaged (an operator must restore it). */
const CLOSED_RETRY_AFTER_S = 60
/** … and before it retries anything else the tenant layer could not do now. */
const RETRY_AFTER_S = 1

/** The ApiError that answers `error` when it is a refusal of the tenant layer; `error` itself otherwise. */
export function refusalAsApiError(error: unknown): unknown {
  if (!(error instanceof TenantRefusal)) return error
  if (error instanceof FileTooLarge) return new ApiError('TL01-1109', error.message)
  if (error instanceof TenantNameTaken) return new ApiError('TL01-1102', error.message)
  if (error instanceof TenantRenamed) return new ApiError('TL01-1005', error.message)
  const retryAfterS = error instanceof TenantClosed ? CLOSED_RETRY_AFTER_S : RETRY_AFTER_S
  return new ApiError('TL01-9011', error.message, null, [], { 'Retry-After': String(retryAfterS) })
}

/** The ApiError that answers a failed restore (see the top), else as refusalAsApiError. */
export function restoreErrorAsApiError(error: unknown): unknown {
  if (error instanceof RestorePointError || error instanceof SnapshotInvalidError) return new ApiError('TL01-1105', error.message)
  if ((error as NodeJS.ErrnoException).code === 'ENOENT') return new ApiError('TL01-1105', (error as Error).message)
  if (error instanceof RecoveryError || error instanceof LogCorruptError) return new ApiError('TL01-1106', error.message)
  return refusalAsApiError(error)
}
