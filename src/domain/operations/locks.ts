/*
 * Locked periods (resources/lock.ts): before a write creates, changes or
 * deletes an object of a resource declared `lockedByDate`, the date the
 * object has (and, for a change, had) is compared with the lock date that
 * applies to its user — the latest of the account's lock (`user` null) and
 * the user's own; a date before it refuses the write with 412 TL01-1106
 * unless the caller is a superuser. Locks are few (one per user at most in
 * practice), so the check reads them all; a tenant without locks pays a
 * size test, resources without lockedByDate one field test.
 */
import type { Caller } from '../caller.js'
import { ApiError } from '../errors.js'
import { Lock } from '../resources/lock.js'
import type { Rec, ResourceDecl } from '../schema.js'
import type { StateView } from '../tx.js'

/** The lock date (epoch ms) that applies to the user's objects; null when none does. */
export function lockDateOf(state: StateView, userId: unknown): number | null {
  let latest: number | null = null
  const locks = state.collection(Lock.type)
  // Most tenants lock nothing: then a write of a time record allocates nothing here.
  if (locks.size === 0) return null
  for (const lock of locks.values()) {
    if (lock.trashItem !== null || typeof lock.lockDate !== 'number') continue
    if (lock.user !== null && lock.user !== undefined && lock.user !== userId) continue
    if (latest === null || lock.lockDate > latest) latest = lock.lockDate
  }
  return latest
}

function refuseIfLocked(state: StateView, decl: ResourceDecl, dateField: string, rec: Rec | Record<string, unknown>, verb: string): void {
  const date = rec[dateField]
  if (typeof date !== 'number') return
  const lockDate = lockDateOf(state, rec.user)
  if (lockDate === null || date >= lockDate) return
  throw new ApiError(
    'TL01-1106',
    `${decl.type} dated ${new Date(date).toISOString()} is locked: the period before ${new Date(lockDate).toISOString()} is locked (time/locks), only an admin may ${verb} it`,
  )
}

/**
 * Refuses a create (`before` undefined), change or delete (`after`
 * undefined) that touches a locked period, unless the caller is a superuser.
 */
export function checkNotLocked(state: StateView, caller: Caller, decl: ResourceDecl, before: Rec | undefined, after: Rec | Record<string, unknown> | undefined): void {
  const dateField = decl.lockedByDate
  if (dateField === null || caller.superuser) return
  if (before !== undefined) refuseIfLocked(state, decl, dateField, before, after === undefined ? 'delete' : 'change')
  if (after !== undefined) refuseIfLocked(state, decl, dateField, after, before === undefined ? 'create' : 'change')
}
