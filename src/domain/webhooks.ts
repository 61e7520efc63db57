/*
 * Whom a webhook delivers as: the admin who created it (`user`). Its events
 * are chosen as that user would see them (changes.ts changeVisibleTo with
 * them as the caller), so a webhook never tells more than its creator may
 * read; while the user is no longer an active superuser (deactivated,
 * trashed, no longer admin nor the account owner) its deliveries pause,
 * with the reason as the webhook's lastError, and go on where they stopped
 * once the user is one again (or another admin recreates the webhook).
 */
import { findAccount } from './account.js'
import type { Caller } from './caller.js'
import type { Rec } from './schema.js'
import type { StateView } from './tx.js'

export type WebhookCaller = { readonly caller: Caller; readonly paused: null } | { readonly caller: null; readonly paused: string }

export function webhookCallerOf(state: StateView, webhook: Rec): WebhookCaller {
  const userId = typeof webhook.user === 'string' ? webhook.user : ''
  const user = state.get('User', userId)
  if (user === undefined || user.trashItem !== null) return { caller: null, paused: `paused: the user who created the webhook (${userId}) no longer exists` }
  if (user.active !== true) return { caller: null, paused: `paused: the user who created the webhook (${userId}) is not active` }
  const isOwner = findAccount(state)?.owner === user.id
  if (!isOwner && user.admin !== true) return { caller: null, paused: `paused: the user who created the webhook (${userId}) is no longer an admin` }
  return { caller: { userId: user.id, superuser: true }, paused: null }
}

/** Whether the webhook is to deliver at all: live (not in the trash) and active. */
export function webhookDelivers(webhook: Rec | undefined): webhook is Rec {
  return webhook !== undefined && webhook.trashItem === null && webhook.active === true
}
