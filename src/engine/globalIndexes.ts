/*
 * Indexes across tenants, kept in LMDB beside the log: e-mail → tenant, for
 * the public check and find calls that must not activate every tenant. They
 * are written in the same event-loop turn as the log entry that changes
 * them, so they share its commit.
 */
import type { LogStore } from '../persist/logStore.js'
import type { Op } from './logEntry.js'

export function indexGlobals(store: LogStore, tenant: string, ops: readonly Op[]): void {
  for (const op of ops) {
    if (op.op !== 'put' || op.type !== 'User') continue
    const email = op.rec.email
    if (typeof email === 'string' && email !== '' && store.emails.get(email.toLowerCase()) === undefined) {
      void store.emails.put(email.toLowerCase(), tenant)
    }
  }
}
