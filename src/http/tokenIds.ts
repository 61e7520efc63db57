/*
 * The stored ids of the access tokens callers sent lately. Every
 * authenticated request looks its token up by the token's SHA-256
 * (authenticate.ts, domain/credentials.ts secretId), and a client sends the
 * same token with request after request: the id of a token seen before is
 * taken from here instead of hashed again (recentResults.ts). The id is a
 * function of the token's text alone — whether the token is valid, expired
 * or revoked is still decided by the lookup in the tenant's state on every
 * request — so an entry is never stale and nothing is dropped on logout.
 * Only texts of a token's length (TOKEN_LENGTH) are kept.
 */
import { secretId, TOKEN_LENGTH } from '../domain/credentials.js'
import { RecentResults } from './recentResults.js'

/** Token ids kept: a few thousand callers active at once. */
export const MAX_REMEMBERED_TOKENS = 4096

const remembered = new RecentResults(secretId, MAX_REMEMBERED_TOKENS, TOKEN_LENGTH)

/** The stored id of an access token (its SHA-256 in hex), remembered for the next request that sends it. */
export function rememberedTokenId(token: string): string {
  return remembered.get(token)
}

/** How many token ids are remembered (for tests of the bound). */
export function rememberedTokenCount(): number {
  return remembered.size
}
