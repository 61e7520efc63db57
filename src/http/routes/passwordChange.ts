/*
 * Password change in two steps (the writes are domain operations:
 * domain/operations/passwordChange.ts).
 *
 * Step 1 makes a PasswordConfirmation for a user; its id is a secret that
 * goes to the user's mailbox (ARCHITECTURE.md §9, the outbox), never to a caller who
 * only holds an API key:
 *   POST {public_url}/v1/users/requestconfirmation?apikey=&email=   (no token)
 *     answers 202 with an empty object, whether or not the e-mail belongs
 *     to anyone (no account enumeration); the id goes by mail.
 *   POST {base_url}/v1/users/{id|@self}/$confirmation?token=
 *     the user themself sends their current password
 *     (`{"currentPassword": …}`, as a PUT of their password needs it:
 *     passwordProof.ts) and gets the id in the answer (201 {id}). An owner
 *     or admin asking for another user gets 202 and the id goes to that
 *     user by mail.
 * An e-mail is unique per tenant only: the public call puts a confirmation
 * with the same id in every tenant the global e-mail index lists for it
 * (less sign-ups that expired unconfirmed), so each of those users can
 * reset the password (the caller names no tenant, and whoever holds the
 * e-mail holds every one of those users); one mail carries it. The call
 * with a token is a change of the User and passes the same permission check
 * as a PUT of it (policy.ts): the user themself, the owner and admins, but
 * only the account owner for the account owner. The mail is handed to the
 * outbox only after the writes are durable.
 *
 * Step 2 sets the password:
 *   POST {public_url}/v1/auth/confirm/{confirmation_id}?apikey=
 *   with `Authorization: Basic base64(":<new password>")`
 * The public URL names no tenant; the global `confirmations` index (hash →
 * the tenants holding it, written in the same commit as the confirmation,
 * globalIndexes.ts) says where to look, and each tenant's state decides:
 * the password is set in every tenant where the confirmation works, and the
 * answer names the user of the first of them by tenant name. The password is hashed
 * before the write; the write consumes the confirmation (once; an expired one
 * is consumed too and refused) and stores the hash; User's onChange hook
 * (sessions.ts) ends every token of the user except the session that asked
 * for the change itself. A confirmation whose id went by mail is one with
 * no `keepTokenId` (only the user's own session gets the id in an answer,
 * and that session is the one kept): that is a reset by mail, which also
 * removes the user's secret keys.
 */
import { accessDenied, ApiError, wrongParameter } from '../../domain/errors.js'
import { checkPasswordLength, hashPassword, newToken, secretId } from '../../domain/credentials.js'
import { passwordChangeMail } from '../../domain/mail.js'
import { confirmForUser } from '../../domain/operations/passwordChange.js'
import { User } from '../../domain/resources/user.js'
import type { Rec } from '../../domain/schema.js'
import { writeInTenant } from '../tenantWrites.js'
import type { Call } from '../call.js'
import { dataResponse, type ApiResponse } from '../response.js'
import type { ResourceAction } from './resourceAction.js'
import { basicPair } from './auth.js'
import { requireApiKey } from '../apiKey.js'
import { emailParameter, publicUrl, tenantsHoldingEmail } from './registration.js'
import { requireSession } from '../requireSession.js'
import { currentPasswordIn, withKnownPassword } from './passwordProof.js'

/** The answer to the user themself: the id. */
function confirmationAnswer(call: Call, confirmationId: string): ApiResponse {
  return dataResponse(call.request, { id: confirmationId }, { root: 'confirmation' }, 201)
}

/** The answer when the id went (or would have gone) by mail: accepted, nothing more. */
function mailedAnswer(call: Call): ApiResponse {
  return dataResponse(call.request, {}, { root: 'confirmation' }, 202)
}

/** Step 1 without a token: by e-mail, on the public URL; the id goes to that address. */
export async function requestConfirmation(call: Call): Promise<ApiResponse> {
  requireApiKey(call)
  const email = emailParameter(call)
  const confirmationId = newToken()
  const { config, outbox } = call.services
  const made = await Promise.all(
    (await tenantsHoldingEmail(call.services, email)).map((tenantName) =>
      writeInTenant(call.services, tenantName, 'confirmByEmail', { email, confirmationId, lifetimeMs: config.passwordConfirmationLifetimeMs }),
    ),
  )
  if (made.includes(true)) outbox.send(passwordChangeMail(email, confirmationId, publicUrl(call.services), config.passwordConfirmationLifetimeMs))
  return mailedAnswer(call)
}

/** Step 1 with a token: `POST /users/{id}/$confirmation`, by the user themself (the id in the answer) or a superuser (by mail). */
const confirmationAction: ResourceAction = {
  async handle(call, _decl, id) {
    if (id === null) throw new ApiError('TL01-9003', '$confirmation needs POST /users/{id}/$confirmation')
    if (call.request.method !== 'POST') throw new ApiError('TL01-9004', `${call.request.method} is not allowed here; use POST`, null, [], { Allow: 'POST' })
    const { tenant, principal: caller } = requireSession(call)
    const userId = id === '@self' ? caller.userId : id
    const self = userId === caller.userId
    if (!self && !caller.superuser) throw accessDenied('only the user themself, the owner and admins may change a password')
    const principal = self ? await withKnownPassword(call, caller, userId, currentPasswordIn(call)) : caller
    const confirmationId = newToken()
    const lifetimeMs = call.services.config.passwordConfirmationLifetimeMs
    const email = await tenant.write((tx) => confirmForUser(tx, principal, userId, confirmationId, lifetimeMs, self))
    if (self) return confirmationAnswer(call, confirmationId)
    call.services.outbox.send(passwordChangeMail(email, confirmationId, publicUrl(call.services), lifetimeMs))
    return mailedAnswer(call)
  },
}

/** The new password of step 2: Basic with an empty user name. */
function newPasswordOf(call: Call): string {
  const pair = basicPair(call)
  if (pair === null || pair.user !== '') throw wrongParameter('send the new password as Authorization: Basic base64(":<new password>")')
  checkPasswordLength(pair.password)
  return pair.password
}

function invalidConfirmation(): ApiError {
  return new ApiError('TL01-1006', 'the confirmation id is invalid, expired or already used')
}

/** Step 2, on the public URL. */
export async function confirmPassword(call: Call, params: Record<string, string>): Promise<ApiResponse> {
  requireApiKey(call)
  const password = newPasswordOf(call)
  const hash = secretId(params.id ?? '')
  const { registry, config } = call.services
  const tenantNames = await registry.beside.tenantsWithConfirmation(hash)
  if (tenantNames.length === 0) throw invalidConfirmation()
  const passwordHash = await hashPassword(password, config.passwordCost)
  const changes = await Promise.all(tenantNames.map((tenantName) => writeInTenant(call.services, tenantName, 'changePassword', { hash, passwordHash })))
  const changed = changes.find((change): change is Rec => typeof change === 'object' && change !== null)
  if (changed === undefined) throw invalidConfirmation()
  return dataResponse(call.request, { id: changed.id, version: changed.version }, { root: User.xmlItemName })
}

export const PASSWORD_ACTIONS: ReadonlyMap<string, ResourceAction> = new Map([['User:$confirmation', confirmationAction]])
