/*
 * Lock (time/locks): a lock date for the whole account (`user` null) or for
 * one user. Objects of a resource declared `lockedByDate` (time records by
 * `start`, expenses by `date`) dated before the lock date that applies to
 * their user are created, changed and deleted by superusers only
 * (operations/locks.ts): the latest lock date among the account's lock and
 * the user's own.
 */
import { declareResource, field } from '../declare.js'

export const Lock = declareResource({
  type: 'Lock',
  path: 'time/locks',
  description: 'a date before which time records and expenses are locked',
  displayName: (rec, context) => (typeof rec.user === 'string' ? context.displayNameOf('User', rec.user) : 'all users'),
  fields: [
    field.date('lockDate', 'time records and expenses dated before this instant are locked', { required: true }),
    field.ref('user', 'User', 'the user whose records are locked; null: every user'),
    field.string('note', 'why the period is locked'),
  ],
})
