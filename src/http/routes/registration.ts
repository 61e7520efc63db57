/*
 * Self-registration on the public URL (API key, no token): checkurl,
 * checkemail, findurl, signup; and `auth/confirm/{accountId}` on the new
 * tenant's URL. Every one of them needs the API key (interface.md,
 * "Registration": no token; `apikey` required). Sign-up creates the tenant:
 * its Account and owner User are the tenant's first log entry, both
 * unconfirmed until confirm. The e-mail calls read the global e-mail index
 * (tenants/globalIndexes.ts: the tenants with a live user of that e-mail); an
 * e-mail is unique per tenant only, so when several tenants have it findurl
 * answers the first by tenant name (a stable choice, the `{url}` shape
 * stays), and sign-up refuses an e-mail any tenant has.
 *
 * Sign-up answers the account id, and confirm takes that id, as the spec
 * fixes ("returns an account id. Confirm takes that id"); the owner also
 * gets a mail through the outbox with the id and the call that confirms.
 * A sign-up not confirmed within SIGNUP_CONFIRMATION_LIFETIME_MS expires
 * (signUps.ts): confirm refuses it, checkurl, checkemail and findurl no
 * longer see its address and e-mail, and a new sign-up may take either.
 */
import { ApiError, violation, wrongParameter } from '../../domain/errors.js'
import { signUpMail } from '../../domain/mail.js'
import { confirmSignUp, foundTenant, refoundTenant, type SignUpValues } from '../../domain/operations/signUp.js'
import { checkPasswordLength, hashPassword } from '../../domain/credentials.js'
import { isPlainObject, readFields } from '../../domain/input.js'
import { Account } from '../../domain/resources/account.js'
import { User } from '../../domain/resources/user.js'
import { refoundSignUp } from '../../tenants/tenantDirectory.js'
import { isValidTenantName, TENANT_NAME_MAX_LENGTH } from '../../domain/tenantName.js'
import { requireApiKey } from '../apiKey.js'
import { parseObjectBody } from '../body.js'
import type { Call, Services } from '../call.js'
import { dataResponse, type ApiResponse } from '../response.js'
import { renderRecord } from '../../domain/render.js'
import { EMAIL_MAX_LENGTH, isEmail, normalEmail } from '../../domain/values.js'

function requiredParameter(call: Call, name: string): string {
  const value = call.request.query.get(name)
  if (value === undefined || value.trim() === '') throw wrongParameter(`query parameter '${name}' is required`)
  return value.trim()
}

/** A required query parameter no longer than `maxLength`: a name looked up as a key of the store (400 past it). */
function boundedParameter(call: Call, name: string, maxLength: number, what: string): string {
  const value = requiredParameter(call, name)
  if (value.length > maxLength) throw wrongParameter(`query parameter '${name}' has ${value.length} characters; ${what} has at most ${maxLength}`)
  return value
}

/** The `email` query parameter in the form e-mails are kept in: required, and no longer than an e-mail address may be. */
export function emailParameter(call: Call): string {
  return normalEmail(boundedParameter(call, 'email', EMAIL_MAX_LENGTH, 'an e-mail address'))
}

export function tenantUrl(services: Services, tenant: string): string {
  const port = services.config.port === 80 ? '' : `:${services.config.port}`
  return `http://${tenant}.${services.config.baseDomain}${port}/v1`
}

/** The public URL of the service, `{public_url}` of the spec (with `/v1`). */
export function publicUrl(services: Services): string {
  const port = services.config.port === 80 ? '' : `:${services.config.port}`
  return `http://${services.config.baseDomain}${port}/v1`
}

/**
 * The tenants with a live user of this e-mail, in tenant-name order, less sign-ups that expired unconfirmed; after
 * every write acknowledged on any node of a cluster (TenantRegistry.tenantsWithEmail).
 */
export async function tenantsHoldingEmail(services: Services, email: string): Promise<string[]> {
  const holding = await services.registry.beside.tenantsWithEmail(email)
  const nowMs = Date.now()
  return holding.filter((tenant) => !services.registry.directory.expiredSignUp(tenant, nowMs))
}

export async function checkUrl(call: Call): Promise<ApiResponse> {
  requireApiKey(call)
  const url = boundedParameter(call, 'url', TENANT_NAME_MAX_LENGTH, 'a URL prefix').toLowerCase()
  const { registry } = call.services
  // A cluster node's copy of the tenant directory may not hold a sign-up another node has just made.
  await registry.beside.freshenTenantName(url)
  return dataResponse(call.request, { exists: registry.exists(url) && !registry.directory.expiredSignUp(url) }, { root: 'result' })
}

export async function checkEmail(call: Call): Promise<ApiResponse> {
  requireApiKey(call)
  const email = emailParameter(call)
  return dataResponse(call.request, { exists: (await tenantsHoldingEmail(call.services, email)).length > 0 }, { root: 'result' })
}

export async function findUrl(call: Call): Promise<ApiResponse> {
  requireApiKey(call)
  const email = emailParameter(call)
  const [tenant] = await tenantsHoldingEmail(call.services, email)
  return dataResponse(call.request, { url: tenant === undefined ? null : tenantUrl(call.services, tenant) }, { root: 'result' })
}

export async function signUp(call: Call): Promise<ApiResponse> {
  requireApiKey(call)
  const { value: body, source } = parseObjectBody(call.request)
  if (!isPlainObject(body.account) || !isPlainObject(body.owner)) throw wrongParameter('the body must be {account: {...}, owner: {...}}')
  const urlPrefix = typeof body.account.urlPrefix === 'string' ? body.account.urlPrefix.trim().toLowerCase() : ''
  if (!isValidTenantName(urlPrefix)) {
    throw violation([
      {
        entityType: 'Account',
        field: 'urlPrefix',
        constraint: 'Pattern',
        message: `Account.urlPrefix must be 1 to ${TENANT_NAME_MAX_LENGTH} lower-case letters, digits or '-' (not at either end), and not reserved`,
      },
    ])
  }
  const password = body.owner.password
  checkPasswordLength(password)
  const { id: _ownerId, ...ownerValues } = readFields(User, body.owner, source, true)
  const email = typeof ownerValues.email === 'string' ? normalEmail(ownerValues.email) : ''
  // Checked before the e-mail index is asked (EMAIL_MAX_LENGTH bounds its keys); the write would refuse it anyway.
  if (email !== '' && !isEmail(email)) {
    throw violation([{ entityType: 'User', field: 'email', constraint: 'Email', message: `User.email must be a well-formed e-mail address of at most ${EMAIL_MAX_LENGTH} characters` }])
  }
  if (email !== '' && (await tenantsHoldingEmail(call.services, email)).length > 0) {
    throw new ApiError('TL01-1102', `a user with e-mail '${email}' already exists`)
  }
  const accountValues = readFields(Account, body.account, source, false)
  const { registry, config, outbox } = call.services
  const passwordHash = await hashPassword(password, config.passwordCost)
  const values: SignUpValues = { owner: ownerValues, email, passwordHash, account: accountValues, urlPrefix }
  const lifetimeMs = config.signUpConfirmationLifetimeMs
  const accountId = registry.directory.expiredSignUp(urlPrefix)
    ? await refoundSignUp(registry, urlPrefix, (tx) => refoundTenant(tx, values, lifetimeMs))
    : await registry.create(urlPrefix, (tx) => foundTenant(tx, values), { unconfirmed: true })
  if (email !== '') outbox.send(signUpMail(email, accountId, tenantUrl(call.services, urlPrefix), lifetimeMs))
  return dataResponse(call.request, { id: accountId }, { root: 'account' }, 201)
}

/** Confirms a new account (and its owner) by the account id that sign-up answered, unless the sign-up expired. */
export async function confirmAccount(call: Call, id: string): Promise<ApiResponse | null> {
  requireApiKey(call)
  const { tenant, tenantName } = call
  if (tenant === null || tenantName === null) return null
  const { registry, config } = call.services
  const confirmed = await tenant.write((tx) => {
    const account = confirmSignUp(tx, id, config.signUpConfirmationLifetimeMs)
    if (account !== null) registry.directory.noteConfirmed(tenantName)
    return account
  })
  if (confirmed === null) return null
  return tenant.read((state) => dataResponse(call.request, renderRecord(Account, confirmed, state, { noExpand: true }), { root: Account.xmlItemName }))
}
