/*
 * User (users): a person who logs in to a tenant. `email` is the login and
 * is set once, kept in lower case and unique in the tenant. A user created by the owner or an admin is confirmed at once
 * (sign-up's owner waits for the confirmation call). A user who is
 * deactivated, trashed or removed loses every session, and a new password
 * ends every session but the one that set it (sessions.ts); one's own new
 * password needs the current one, and a reset by anyone else revokes the
 * user's secret keys too (passwordRules.ts). Its e-mail feeds the global
 * e-mail index (globalFeed.ts): the tenants that have a live user with it.
 */
import type { StateView } from '../tx.js'
import type { Rec } from '../schema.js'
import { createdField, declareResource, email, field, ianaTimeZone, max, min, personName, size } from '../declare.js'
import { displayFormatFields } from './displayFormats.js'
import { userChanged } from '../passwordRules.js'
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from '../credentials.js'
import { indexableEmail, normalEmail } from '../values.js'

export const User = declareResource({
  type: 'User',
  path: 'users',
  // The original addresses a user's time records and price lists under time/users/{id}.
  aliases: ['time/users'],
  writeRule: 'self',
  description: 'a user of the account',
  cascades: ['Access', 'ProjectMember', 'SecretKey', 'SpendingTimeUnit'],
  displayName: (rec) => personName(rec),
  inner: [
    { name: 'projects', childType: 'Project', via: 'owner' },
    { name: 'accesses', childType: 'Access', via: 'user' },
    { name: 'timerecords', childType: 'TimeRecord', via: 'user' },
    { name: 'pricelists', childType: 'TimePriceList', via: 'user' },
  ],
  unique: [['email']],
  onCreate: (_tx, rec, creator): Rec => ({
    ...rec,
    email: typeof rec.email === 'string' ? normalEmail(rec.email) : rec.email,
    confirmed: creator?.superuser === true ? true : rec.confirmed,
  }),
  onChange: userChanged,
  globalIndex: {
    table: 'emails',
    keyOf: (rec) => (typeof rec.email === 'string' && indexableEmail(rec.email) ? rec.email.toLowerCase() : null),
    heldIn: (state, key) => liveUserWithEmail(state, key) !== undefined,
  },
  fields: [
    field.string('firstName', 'first name', { inStub: true }),
    field.string('lastName', 'last name', { inStub: true }),
    field.string('email', 'e-mail address, the login; set once', { required: true, constraints: [email], indexed: true, setOnce: true }),
    field.string('password', 'password (at least 8 characters)', { access: 'WRITE_ONLY', hashed: true, constraints: [size(MIN_PASSWORD_LENGTH, MAX_PASSWORD_LENGTH)] }),
    field.string('phone', 'phone number'),
    field.string('position', 'job position'),
    field.boolean('active', 'user may log in', { required: true, defaultValue: true }),
    field.boolean('admin', 'may do everything in the tenant', { required: true, defaultValue: false }),
    field.boolean('projectManager', 'manages the time records of other users', { required: true, defaultValue: false }),
    field.string('language', 'preferred language'),
    field.string('timeZone', 'IANA time zone', { constraints: [ianaTimeZone] }),
    field.integer('weekStart', 'first day of the week, Monday = 1', { constraints: [min(1), max(7)] }),
    field.boolean('confirmed', 'the user confirmed the e-mail address', { access: 'READ_ONLY' }),
    field.string('confirmedEmail', 'the e-mail address the user confirmed (null until confirmed)', { access: 'READ_ONLY', derive: (rec) => (rec.confirmed === true ? rec.email : null) }),
    field.string('nickName', 'nickname'),
    field.boolean('birthdayRemind', "remind of the user's birthday"),
    ...displayFormatFields(),
    createdField(),
  ],
})

/** The user outside the trash with this (lower-case) e-mail: there is at most one; a trashed user keeps theirs. */
export function liveUserWithEmail(state: StateView, address: string): Rec | undefined {
  for (const user of state.collection(User.type).lookup('email', address)) if (user.trashItem === null) return user
  return undefined
}
