/*
 * Indexes across tenants, kept in the GlobalDirectory (persist/ports.ts;
 * embedded: LMDB tables beside the log), for the public calls
 * that name no tenant and must not activate every tenant:
 *
 *   emails         [e-mail, tenant] → ''  for every tenant that has a live
 *                  (not trashed) user with that lower-cased e-mail
 *   confirmations  [SHA-256 of a confirmation id, tenant] → ''  for every
 *                  tenant holding that password confirmation (the public
 *                  step 1 puts the same id in each tenant with the e-mail)
 *
 * An e-mail is unique per tenant only, so one e-mail may list several
 * tenants; the tables order array keys element by element, so the range from
 * [e-mail, ''] to [e-mail, '\uffff'] reads them in tenant-name order
 * (tenant names are lower-case letters, digits and '-'). The entries are maintained from what each write did: for
 * every e-mail a write touches (a User it put, a User it removed or
 * replaced — the record as it was comes from the WriteTx, the logged `del`
 * carries only the id, so an e-mail changed by `$setEmail` leaves its old
 * address here too) the tenant's entry is set or removed by asking the tenant's state
 * after the write whether a live user still has it. They are queued in the
 * same event-loop turn as the log entry, so they share its commit. The
 * tenant's state stays the judge; the index only says where to look.
 *
 * The tenant directory's `webhooks` marker (tenantDirectory.ts) is kept
 * from the same writes: one that made a webhook start or stop delivering
 * (not the deliveries' own bookkeeping) has the marker say whether the
 * tenant has an active webhook after it.
 *
 * Layout. The string key `\u0001layout` of the emails table (GLOBAL_INDEX_LAYOUT_KEY, persist/ports.ts) names the layout. A data
 * directory without it (written when the tables held `e-mail → tenant`,
 * first one wins, never forgetting) has both tables rebuilt from the
 * tenants' states at start-up (rebuildGlobalIndexesIfOld): the indexes are
 * derived data.
 */
import type { Rec } from '../domain/schema.js'
import { GLOBAL_INDEX_LAYOUT, GLOBAL_INDEX_LAYOUT_KEY, LogCorruptError, type GlobalDirectory, type GlobalIndexKey, type Storage } from '../persist/ports.js'
import { recoverTenant, RecoveryError } from './recovery.js'
import { markWebhooks, tenantNames } from './tenantDirectory.js'
import { liveUserWithEmail } from '../domain/resources/user.js'
import { EMAIL_MAX_LENGTH, normalEmail } from '../domain/values.js'
import { webhookDelivers } from '../domain/webhooks.js'
import type { Op } from '../engine/logEntry.js'
import type { TenantState } from '../engine/tenantState.js'
import type { WriteTx } from '../engine/writeTx.js'

/** Above every tenant name in the tables' key order. */
const AFTER_EVERY_TENANT = '\uffff'

function keyOf(name: string, tenant: string): [string, string] {
  return [name, tenant]
}

/** The parts of an entry key; null for the layout marker and for keys of the old layout (plain strings). */
function parseKey(key: GlobalIndexKey): { name: string; tenant: string } | null {
  if (!Array.isArray(key) || key.length !== 2) return null
  return { name: key[0], tenant: key[1] }
}

function tenantsUnder(table: GlobalDirectory['emails'], name: string): string[] {
  const tenants: string[] = []
  for (const key of table.getKeys({ start: [name, ''], end: [name, AFTER_EVERY_TENANT] })) {
    const parsed = parseKey(key)
    if (parsed !== null && parsed.name === name) tenants.push(parsed.tenant)
  }
  return tenants
}

/**
 * Whether an e-mail can be in the index: not empty, and no longer than a User's may be (EMAIL_MAX_LENGTH): a longer
 * one is never looked up (it would be a key over LMDB's size limit, or PostgreSQL's index row limit).
 */
function indexableEmail(name: string): boolean {
  return name !== '' && name.length <= EMAIL_MAX_LENGTH
}

/** The tenants that have a live user with this e-mail, in tenant-name order. */
function tenantsWithEmail(store: GlobalDirectory, email: string): string[] {
  const name = normalEmail(email)
  return indexableEmail(name) ? tenantsUnder(store.emails, name) : []
}

/** The tenants holding the password confirmation with this SHA-256, in tenant-name order. */
function tenantsWithConfirmation(store: GlobalDirectory, hash: string): string[] {
  return hash === '' ? [] : tenantsUnder(store.confirmations, hash)
}

/**
 * tenantsWithEmail after every write acknowledged anywhere: in cluster mode another node's write may not have reached
 * this node's copy of the index yet (GlobalDirectory.freshen reads the e-mail's entries first).
 */
export async function freshTenantsWithEmail(store: GlobalDirectory, email: string): Promise<string[]> {
  const name = normalEmail(email)
  if (indexableEmail(name)) await store.freshen?.('emails', name)
  return tenantsWithEmail(store, name)
}

/** tenantsWithConfirmation after every write acknowledged anywhere (as freshTenantsWithEmail). */
export async function freshTenantsWithConfirmation(store: GlobalDirectory, hash: string): Promise<string[]> {
  if (hash !== '') await store.freshen?.('confirmations', hash)
  return tenantsWithConfirmation(store, hash)
}

function liveEmailsOf(state: TenantState): Set<string> {
  const emails = new Set<string>()
  for (const user of state.collection('User').values()) {
    if (user.trashItem === null && typeof user.email === 'string' && user.email !== '') emails.add(user.email.toLowerCase())
  }
  return emails
}

function confirmationHashesOf(state: TenantState): Set<string> {
  return new Set([...state.collection('PasswordConfirmation').values()].map((rec) => rec.id))
}

function noteEmail(emails: Set<string>, rec: Rec): void {
  if (typeof rec.email === 'string' && indexableEmail(rec.email)) emails.add(rec.email.toLowerCase())
}

/**
 * Brings this tenant's entries up to date with a write about to be logged (tx.state is the state after it).
 * Every key write is unconditional: reads do not see writes queued but not yet committed, so skipping a
 * put because the key "is there" could lose it behind a queued remove.
 */
export function indexGlobals(store: GlobalDirectory, tenant: string, tx: WriteTx): void {
  const emails = new Set<string>()
  for (const op of tx.ops) {
    if (op.type === 'User' && op.op === 'put') noteEmail(emails, op.rec)
    else if (op.type === 'PasswordConfirmation') indexConfirmation(store, tenant, op)
  }
  if (tx.ops.some((op) => op.type === WEBHOOK_TYPE) && webhookTurned(tx)) markWebhooks(store, tenant, hasActiveWebhook(tx.state))
  for (const previous of tx.previousRecords('User')) noteEmail(emails, previous)
  for (const email of emails) {
    const key = keyOf(email, tenant)
    if (liveUserWithEmail(tx.state, email) !== undefined) void store.emails.put(key, '')
    else void store.emails.remove(key)
  }
}

const WEBHOOK_TYPE = 'Webhook'

/** Whether the write made a webhook start or stop delivering (created, (de)activated, trashed, restored, removed). */
function webhookTurned(tx: WriteTx): boolean {
  const before = new Map<string, Rec>()
  for (const rec of tx.previousRecords(WEBHOOK_TYPE)) if (!before.has(rec.id)) before.set(rec.id, rec)
  for (const op of tx.ops) {
    if (op.type !== WEBHOOK_TYPE) continue
    const id = op.op === 'put' ? op.rec.id : op.id
    if (webhookDelivers(before.get(id)) !== webhookDelivers(tx.state.get(WEBHOOK_TYPE, id))) return true
  }
  return false
}

/** Whether the state holds an active webhook (what the directory's `webhooks` marker says). */
export function hasActiveWebhook(state: TenantState): boolean {
  for (const webhook of state.collection(WEBHOOK_TYPE).values()) if (webhookDelivers(webhook)) return true
  return false
}

function indexConfirmation(store: GlobalDirectory, tenant: string, op: Op): void {
  if (op.op === 'put') void store.confirmations.put(keyOf(op.rec.id, tenant), '')
  else void store.confirmations.remove(keyOf(op.id, tenant))
}

/**
 * Makes the indexes hold what a whole state put in place at once (a restore or an import) holds for its
 * tenant: its live users' e-mails and its confirmations are added, and this tenant's entries the state does
 * not back are removed (a restore to an earlier point drops the users made since). This walks both tables
 * once, over all tenants: an operator action, not a request path.
 */
export function indexGlobalsOfState(store: GlobalDirectory, tenant: string, state: TenantState): void {
  markWebhooks(store, tenant, hasActiveWebhook(state))
  const emails = liveEmailsOf(state)
  const confirmations = confirmationHashesOf(state)
  for (const email of emails) void store.emails.put(keyOf(email, tenant), '')
  for (const hash of confirmations) void store.confirmations.put(keyOf(hash, tenant), '')
  for (const [table, held] of [[store.emails, emails], [store.confirmations, confirmations]] as const) {
    for (const key of table.getKeys()) {
      const parsed = parseKey(key)
      if (parsed !== null && parsed.tenant === tenant && !held.has(parsed.name)) void table.remove(key)
    }
  }
}

export interface IndexRebuild {
  tenants: number
  emails: number
  confirmations: number
  /** Tenants whose state could not be recovered (their entries come with the restore that reopens them). */
  skipped: string[]
}

/**
 * At start-up: when the emails table does not carry the current layout marker, both tables are rebuilt from
 * every tenant's state (its newest snapshot plus the log, one tenant in memory at a time) and replaced in one
 * transaction together with the marker, so a crash midway leaves the old tables and the next start tries
 * again. `say` hears one line about it. Null when the layout is current.
 */
export function rebuildGlobalIndexesIfOld(store: Storage, say?: (line: string) => void): IndexRebuild | null {
  if (store.emails.get(GLOBAL_INDEX_LAYOUT_KEY) === GLOBAL_INDEX_LAYOUT) return null
  const emailKeys: [string, string][] = []
  const confirmationKeys: [string, string][] = []
  const result: IndexRebuild = { tenants: 0, emails: 0, confirmations: 0, skipped: [] }
  for (const tenant of tenantNames(store)) {
    let state: TenantState
    try {
      state = recoverTenant(tenant, store).state
    } catch (error) {
      if (!(error instanceof RecoveryError) && !(error instanceof LogCorruptError)) throw error
      result.skipped.push(tenant)
      continue
    }
    result.tenants += 1
    for (const email of liveEmailsOf(state)) emailKeys.push(keyOf(email, tenant))
    for (const hash of confirmationHashesOf(state)) confirmationKeys.push(keyOf(hash, tenant))
  }
  store.replaceIndexes(emailKeys, confirmationKeys, { key: GLOBAL_INDEX_LAYOUT_KEY, value: GLOBAL_INDEX_LAYOUT })
  result.emails = emailKeys.length
  result.confirmations = confirmationKeys.length
  const skipped = result.skipped.length === 0 ? '' : `; skipped (cannot be recovered): ${result.skipped.join(', ')}`
  if (result.tenants + result.skipped.length > 0) say?.(`global indexes rebuilt in the current layout from ${result.tenants} tenants: ${result.emails} e-mail and ${result.confirmations} confirmation entries${skipped}`)
  return result
}
