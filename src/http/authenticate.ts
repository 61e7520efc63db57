/*
 * Who is calling: the access token from the `token` query parameter (or
 * `Authorization: Bearer`) is looked up by its SHA-256 in the tenant's
 * AuthToken collection (the SHA-256 of a token sent before is remembered:
 * tokenIds.ts). Missing → 400 TL01-1002; unknown, expired, or of a
 * user who is inactive or in the trash → 401 TL01-1010 (the rule is the
 * domain's: domain/operations/tokens.ts userOfAccessToken; who is a
 * superuser: domain/caller.ts). A token of another tenant is simply unknown
 * here.
 */
import { ApiError } from '../domain/errors.js'
import { callerOfUser } from '../domain/caller.js'
import { userOfAccessToken } from '../domain/operations/tokens.js'
import type { Rec } from '../domain/schema.js'
import type { TenantView } from '../domain/tx.js'
import type { MaybePromise } from '../maybePromise.js'
import type { Call, Principal } from './call.js'
import { accessTokenRequired } from './requireSession.js'
import { rememberedTokenId } from './tokenIds.js'

function tokenOf(call: Call): string | undefined {
  const fromQuery = call.request.query.get('token')
  if (fromQuery !== undefined && fromQuery !== '') return fromQuery
  const header = call.request.headers.get('authorization')
  if (header !== undefined && /^Bearer\s+/i.test(header)) return header.replace(/^Bearer\s+/i, '').trim()
  return undefined
}

export function principalFor(state: TenantView, user: Rec, tokenId: string): Principal {
  return callerOfUser(state, user, tokenId)
}

/** The caller; at once (no promise) when the tenant is idle (maybePromise.ts). */
export function authenticate(call: Call): MaybePromise<Principal> {
  if (call.tenant === null) throw new ApiError('TL01-1005', 'this call needs a tenant address')
  const token = tokenOf(call)
  if (token === undefined) throw accessTokenRequired(' (query parameter token)')
  const tokenId = rememberedTokenId(token)
  const now = Date.now()
  // The token check needs no durability barrier: whatever the request answers waits for one.
  return call.tenant.inspect((state) => principalFor(state, userOfAccessToken(state, tokenId, now), tokenId))
}
