/*
 * A tenant for direct tests of the domain operations, without HTTP: a
 * fresh TenantState with an account and its confirmed owner (founded and
 * confirmed through the sign-up operations), and a way to run a write as
 * the actor would — an operation on a WriteTx, rolled back when it throws;
 * and more users, made as a POST would make them.
 */
import { ApiError } from '../../src/domain/errors.js'
import { createObject } from '../../src/domain/operations/createObject.js'
import { confirmSignUp, foundTenant } from '../../src/domain/operations/signUp.js'
import { User } from '../../src/domain/resources/user.js'
import { accountOf } from '../../src/domain/account.js'
import { TenantState } from '../../src/engine/tenantState.js'
import { WriteTx } from '../../src/engine/writeTx.js'

export const NOW = 1_700_000_000_000

export interface TestCaller {
  readonly userId: string
  readonly superuser: boolean
  readonly isOwner: boolean
  readonly tokenId: string
}

export interface DomainTenant {
  readonly state: TenantState
  /** The account owner, as a caller of the session `owner-session`. */
  readonly owner: TestCaller
  /** Runs `decide` as one write at `now` (NOW unless given); rolled back if it throws. */
  write<T>(decide: (tx: WriteTx) => T, now?: number): T
}

export function domainTenant(name = 'acme'): DomainTenant {
  const state = new TenantState(name)
  state.finishLoad()
  const write = <T>(decide: (tx: WriteTx) => T, now = NOW): T => {
    const tx = new WriteTx(state, now)
    try {
      return decide(tx)
    } catch (error) {
      tx.rollback()
      throw error
    }
  }
  write((tx) => {
    const accountId = foundTenant(tx, {
      owner: { firstName: 'Olga', lastName: 'Owner' },
      email: 'olga@acme.test',
      passwordHash: 'a-hash-of-the-owner-password',
      account: { name: 'Acme' },
      urlPrefix: name,
    })
    confirmSignUp(tx, accountId, 86_400_000)
  })
  const owner: TestCaller = { userId: accountOf(state).owner as string, superuser: true, isOwner: true, tokenId: 'owner-session' }
  return { state, owner, write }
}

/**
 * A user of the tenant, made by the owner as a POST of it would be (active, confirmed, neither admin nor project
 * manager unless `values` say so), as a caller of the session `<e-mail>-session`.
 */
export function addUser(tenant: DomainTenant, email: string, values: Record<string, unknown> = {}): TestCaller {
  const user = tenant.write((tx) => createObject(tx, tenant.owner, User, { email, firstName: email.split('@')[0], lastName: 'Test', password: 'a-hash-of-a-password', ...values }))
  return { userId: user.id, superuser: user.admin === true, isOwner: false, tokenId: `${email}-session` }
}

/** The error code `fn` throws (an ApiError's code, else the error as text); null when it throws nothing. */
export function codeOf(fn: () => unknown): string | null {
  try {
    fn()
    return null
  } catch (error) {
    return error instanceof ApiError ? error.code : String(error)
  }
}
