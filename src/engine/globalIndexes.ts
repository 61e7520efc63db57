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

/** Indexes a whole state put in place at once (a restore or an import), as if its records had just been written. */
export function indexGlobalsOfState(store: LogStore, tenant: string, state: TenantState): void {
  for (const type of INDEXED_TYPES) {
    indexGlobals(store, tenant, [...state.collection(type).values()].map((rec): Op => ({ op: 'put', type, rec })))
  }
}
