/*
 * Indexes across tenants, kept in LMDB beside the log: e-mail → tenant, for
 * the public check and find calls that must not activate every tenant, and
 * password confirmation → tenant, for the public step 2 of a password
 * change (the tenant's state stays the judge; the index only says where to
 * look, so an entry left behind by a failed append is harmless). They
 * are written in the same event-loop turn as the log entry that changes
 * them, so they share its commit.
 */
import type { LogStore } from '../persist/logStore.js'
import type { Op } from './logEntry.js'
import type { TenantState } from './tenantState.js'

function indexEmail(store: LogStore, tenant: string, email: unknown): void {
  if (typeof email === 'string' && email !== '' && store.emails.get(email.toLowerCase()) === undefined) {
    void store.emails.put(email.toLowerCase(), tenant)
  }
}

/** Password confirmations (their id is a SHA-256) → tenant, for the public step 2 of a password change. */
function indexConfirmation(store: LogStore, tenant: string, op: Op): void {
  if (op.op === 'put') void store.confirmations.put(op.rec.id, tenant)
  else void store.confirmations.remove(op.id)
}

export function indexGlobals(store: LogStore, tenant: string, ops: readonly Op[]): void {
  for (const op of ops) {
    if (op.type === 'User' && op.op === 'put') indexEmail(store, tenant, op.rec.email)
    else if (op.type === 'PasswordConfirmation') indexConfirmation(store, tenant, op)
  }
}

const INDEXED_TYPES = ['User', 'PasswordConfirmation']

/**
 * Makes the indexes hold what a whole state put in place at once (a restore or an import) holds for its
 * tenant: its records are indexed as if just written, and the entries that point to this tenant for an
 * e-mail no user of the state has, or a confirmation the state does not hold, are removed (a restore to an
 * earlier point drops the users made since). This walks both indexes once, over all tenants: an operator
 * action, not a request path.
 */
export function indexGlobalsOfState(store: LogStore, tenant: string, state: TenantState): void {
  for (const type of INDEXED_TYPES) {
    indexGlobals(store, tenant, [...state.collection(type).values()].map((rec): Op => ({ op: 'put', type, rec })))
  }
  const emails = new Set<string>()
  for (const user of state.collection('User').values()) if (typeof user.email === 'string') emails.add(user.email.toLowerCase())
  for (const { key, value } of store.emails.getRange()) {
    if (value === tenant && !emails.has(key)) void store.emails.remove(key)
  }
  for (const { key, value } of store.confirmations.getRange()) {
    if (value === tenant && state.get('PasswordConfirmation', key) === undefined) void store.confirmations.remove(key)
  }
}
