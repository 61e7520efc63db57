/*
 * The caller's sessions (the rules in domain/operations/accessTokens.ts):
 *
 *   GET    users/@self/accesstokens        the caller's usable sessions, oldest first: {id, displayName, createdAt,
 *                                          expiration, refreshExpiration, current}; never a token's text
 *   DELETE users/@self/accesstokens/{id}   ends that session (its access and refresh token); ending the current
 *                                          one is a logout. 404 for an id that is not one of the caller's sessions
 *
 * Fixed routes, so they match before the users resource, like the secret keys.
 */
import { listAccessTokens, revokeAccessToken } from '../../domain/operations/accessTokens.js'
import type { Call } from '../call.js'
import { requireSession } from '../requireSession.js'
import { dataResponse, type ApiResponse } from '../response.js'

const XML_NAMES = { root: 'accessTokens', item: 'accessToken' }

export async function listOwnAccessTokens(call: Call): Promise<ApiResponse> {
  const { tenant, principal } = requireSession(call)
  const nowMs = Date.now()
  return tenant.read((state) => dataResponse(call.request, listAccessTokens(state, principal, nowMs), XML_NAMES))
}

export async function revokeOwnAccessToken(call: Call, params: Record<string, string>): Promise<ApiResponse> {
  const { tenant, principal } = requireSession(call)
  const id = params.id ?? ''
  const { current } = await tenant.write((tx) => revokeAccessToken(tx, principal, id))
  return dataResponse(call.request, { id, deleted: true, loggedOut: current }, { root: XML_NAMES.item })
}
