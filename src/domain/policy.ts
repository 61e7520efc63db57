/*
 * Visibility and permissions, in one place (resources.md, "Visibility and
 * permissions"). Reads: everything of the tenant is visible except personal
 * projects of other users and whatever belongs to such a project (its time
 * records, tasks, members, …), what only superusers see (a
 * declaration's readRule `superuser`: webhooks), and what only its own user
 * sees (readRule `userOnly`: secret keys, hidden from the owner and admins
 * too); a trash item is seen by whoever sees its
 * deleted object (the declaration's `standsFor`). Writes: the declaration's WriteRule says who
 * may change a resource; the owner and admins always may, with one limit
 * above every rule: the account owner (the User that Account.owner names)
 * is changed only by the owner themself, and no one, the owner included,
 * takes from that record what keeps the tenant run (OWNER_KEEPS) or trashes
 * or deletes it. The account passes to another user only by the owner's own
 * change of Account.owner, and only to an active admin outside the trash.
 * A write needs to see the record, before and after. Removing a record of
 * a resource `revocableBy: 'managersOfUser'` (a secret key) is also open,
 * unseen, to a superuser who may change the record's user: an admin
 * revokes the keys of any user but the account owner, the owner anyone's
 * (mayRevoke). `mayChange` answers the same question as a write check
 * without throwing, for lists of what the caller may edit. `audienceOf`
 * answers canSee for every caller at once (audience.ts), for the change
 * feed.
 */
import { EVERYONE, NOBODY, onlyUser, SUPERUSERS, type Audience } from './audience.js'
import type { Caller } from './caller.js'
import { accessDenied } from './errors.js'
import { findResourceByType } from './resources/index.js'
import type { DisplayContext, Rec, ResourceDecl } from './schema.js'

/** Fields a user may not change on their own User object. */
const SELF_PROTECTED_FIELDS = ['admin', 'active', 'projectManager'] as const

/** The type of the account owner (what Account.owner refers to) and the values that record always keeps. */
const OWNER_TYPE = 'User'
const OWNER_KEEPS: Readonly<Record<string, unknown>> = { active: true, admin: true }

/** What the write checks read besides records: the tenant's one Account (StateView is such a context). */
export interface PolicyContext extends DisplayContext {
  collection(type: string): { values(): Iterable<Rec> }
}

function projectOf(decl: ResourceDecl, rec: Rec, context: DisplayContext): Rec | undefined {
  if (decl.type === 'Project') return rec
  const projectId = rec.project
  return typeof projectId === 'string' && decl.fieldsByName.get('project')?.ref === 'Project' ? context.get('Project', projectId) : undefined
}

/** Visible exactly when the caller may see the object (a deleted one, for a trash item) that the record stands for. */
function canSeeWhatItStandsFor(caller: Caller, decl: ResourceDecl, rec: Rec, context: DisplayContext): boolean {
  const target = decl.standsFor?.(rec)
  const targetDecl = target === undefined ? undefined : findResourceByType(target.type)
  const object = target === undefined || targetDecl === undefined ? undefined : context.get(targetDecl.type, target.id)
  return targetDecl !== undefined && object !== undefined && canSee(caller, targetDecl, object, context)
}

/** Whether a project, and all that belongs to it, is hidden from the caller: someone else's personal project. */
export function projectHiddenFrom(caller: Caller, project: Rec): boolean {
  return project.personal === true && project.owner !== caller.userId
}

export function canSee(caller: Caller, decl: ResourceDecl, rec: Rec, context: DisplayContext): boolean {
  if (decl.internal) return false
  if (decl.standsFor !== undefined) return canSeeWhatItStandsFor(caller, decl, rec, context)
  if (decl.readRule === 'userOnly' && rec.user !== caller.userId) return false
  if (decl.readRule === 'superuser' && !caller.superuser) return false
  const project = projectOf(decl, rec, context)
  return project === undefined || !projectHiddenFrom(caller, project)
}

/** The field naming the project a record belongs to (a project's own id), whose personal projects hide it; null for none. */
function projectFieldOf(decl: ResourceDecl): string | null {
  return decl.type === 'Project' ? 'id' : decl.fieldsByName.get('project')?.ref === 'Project' ? 'project' : null
}

/**
 * The fields of a record that visibilityFor's predicate reads, so that a scan may hand it just these
 * (query/plan.ts); null when it reads the whole record (a resource that stands for another).
 */
export function visibilityFieldsOf(decl: ResourceDecl): readonly string[] | null {
  if (decl.standsFor !== undefined) return null
  const projectField = projectFieldOf(decl)
  return projectField === null ? ['user'] : ['user', projectField]
}

/**
 * Whether visibilityFor's predicate answers true for every record of the type: the caller sees the whole resource
 * (no rule of the type hides a record from them, and the tenant has no personal project), so a scan need not ask
 * it row by row (query/plan.ts).
 */
export function seesEveryRecord(caller: Caller, decl: ResourceDecl, personalProjects: ReadonlyMap<string, Rec>): boolean {
  if (decl.internal || decl.standsFor !== undefined || decl.readRule === 'userOnly') return false
  if (decl.readRule === 'superuser' && !caller.superuser) return false
  return projectFieldOf(decl) === null || personalProjects.size === 0
}

/**
 * canSee for many records of one type (a list's scan): what depends on the
 * type is decided once, and a record's project is looked up only among the
 * tenant's personal projects (`personalProjects`: id → project), usually
 * none. Same answers as canSee.
 */
export function visibilityFor(caller: Caller, decl: ResourceDecl, context: DisplayContext, personalProjects: ReadonlyMap<string, Rec>): (rec: Rec) => boolean {
  if (decl.internal) return () => false
  if (decl.standsFor !== undefined) return (rec) => canSeeWhatItStandsFor(caller, decl, rec, context)
  if (decl.readRule === 'superuser' && !caller.superuser) return () => false
  const ownRecordsOnly = decl.readRule === 'userOnly'
  const projectField = projectFieldOf(decl)
  return (rec) => {
    if (ownRecordsOnly && rec.user !== caller.userId) return false
    if (projectField === null || personalProjects.size === 0) return true
    const project = personalProjects.get(rec[projectField] as string)
    return project === undefined || !projectHiddenFrom(caller, project)
  }
}

/**
 * Who sees both: what two of canSee's rules allow together. Where no audience says it exactly (a superuser-only or
 * own-record resource inside someone's personal project: no declaration is both, a test checks it), the narrower
 * nobody.
 */
function bothOf(a: Audience, b: Audience): Audience {
  if (a.kind === 'everyone') return b
  if (b.kind === 'everyone') return a
  if (a.kind === 'nobody' || b.kind === 'nobody') return NOBODY
  if (a.kind === 'superusers' && b.kind === 'superusers') return SUPERUSERS
  if (a.kind === 'user' && b.kind === 'user') {
    if (a.userId === b.userId) return { kind: 'user', userId: a.userId, superusers: a.superusers && b.superusers }
    return a.superusers && b.superusers ? SUPERUSERS : NOBODY
  }
  const user = a.kind === 'user' ? a : b.kind === 'user' ? b : null
  return user?.superusers ? SUPERUSERS : NOBODY
}

/** The audience of what a read rule alone allows (the project's rule aside). */
function readRuleAudience(decl: ResourceDecl, rec: Rec): Audience {
  switch (decl.readRule) {
    case 'everyone':
      return EVERYONE
    case 'superuser':
      return SUPERUSERS
    case 'userOnly':
      return onlyUser(rec.user)
  }
}

/** Whether records of the resource belong to a project, whose being personal hides them (projectOf). */
function belongsToProjects(decl: ResourceDecl): boolean {
  return decl.type === 'Project' || decl.fieldsByName.get('project')?.ref === 'Project'
}

/** canSee for every caller at once: the callers it admits (audience.ts) are exactly those canSee lets see `rec`. */
export function audienceOf(decl: ResourceDecl, rec: Rec, context: DisplayContext): Audience {
  if (decl.internal) return NOBODY
  if (decl.standsFor !== undefined) {
    const target = decl.standsFor(rec)
    const targetDecl = findResourceByType(target.type)
    const object = targetDecl === undefined ? undefined : context.get(targetDecl.type, target.id)
    return targetDecl === undefined || object === undefined ? NOBODY : audienceOf(targetDecl, object, context)
  }
  const project = projectOf(decl, rec, context)
  const projectAudience = project === undefined || project.personal !== true ? EVERYONE : onlyUser(project.owner)
  return bothOf(readRuleAudience(decl, rec), projectAudience)
}

/** Whether the record belongs to a project the state does not hold (removed for good since: a dangling reference). */
export function namesMissingProject(decl: ResourceDecl, rec: Rec, context: DisplayContext): boolean {
  if (decl.type === 'Project' || !belongsToProjects(decl) || typeof rec.project !== 'string') return false
  return context.get('Project', rec.project) === undefined
}

/**
 * Who sees every record of the resource, whatever its fields say: for a record that is known only by its type (a
 * removal logged without its audience, by an older build). A record that can belong to a personal project, to one
 * user, or stand for another object may be hidden from anyone: nobody.
 */
export function audienceOfEveryRecord(decl: ResourceDecl): Audience {
  if (decl.internal || decl.standsFor !== undefined || belongsToProjects(decl) || decl.readRule === 'userOnly') return NOBODY
  return decl.readRule === 'everyone' ? EVERYONE : SUPERUSERS
}

function isProjectManager(caller: Caller, context: DisplayContext): boolean {
  return context.get('User', caller.userId)?.projectManager === true
}

function allowedByRule(caller: Caller, decl: ResourceDecl, rec: Rec, before: Rec | undefined, context: DisplayContext): boolean {
  switch (decl.writeRule) {
    case 'superuser':
      return false
    case 'projectManager':
      return isProjectManager(caller, context)
    case 'projectOwner': {
      const projects = [projectOf(decl, rec, context), before && projectOf(decl, before, context)]
      if (decl.type === 'Project' && before === undefined) return rec.owner === caller.userId || isProjectManager(caller, context)
      return projects.every((project) => project === undefined || project.owner === caller.userId) || isProjectManager(caller, context)
    }
    case 'ownRecord': {
      const owned = rec.user === caller.userId && (before === undefined || before.user === caller.userId)
      if (owned) return true
      const project = projectOf(decl, rec, context)
      return isProjectManager(caller, context) && project !== undefined && project.owner === caller.userId
    }
    case 'self':
      return before !== undefined && rec.id === caller.userId && SELF_PROTECTED_FIELDS.every((name) => rec[name] === before[name])
  }
}

function accountOwnerId(context: PolicyContext): unknown {
  for (const account of context.collection('Account').values()) return account.owner
  return undefined
}

function isAccountOwnerRecord(decl: ResourceDecl, rec: Rec, context: PolicyContext): boolean {
  return decl.type === OWNER_TYPE && rec.id === accountOwnerId(context)
}

/** The field of OWNER_KEEPS that `rec` does not hold, if any. */
function lostOwnerValue(rec: Rec, before: Rec): string | undefined {
  return Object.keys(OWNER_KEEPS).find((name) => rec[name] !== before[name] && rec[name] !== OWNER_KEEPS[name])
}

/** The account owner's own record and the account's owner reference: the limits above every write rule. */
function checkAccountOwnership(caller: Caller, decl: ResourceDecl, rec: Rec, before: Rec | undefined, context: PolicyContext): void {
  if (before === undefined) return
  if (isAccountOwnerRecord(decl, before, context)) {
    if (caller.userId !== before.id) throw accessDenied(`only the account owner may change the account owner's ${decl.type}`)
    const lost = lostOwnerValue(rec, before)
    if (lost !== undefined) {
      throw accessDenied(`the account owner's ${lost} must stay ${String(OWNER_KEEPS[lost])}: the account needs an owner who can log in and do everything`)
    }
  }
  if (decl.type === 'Account' && rec.owner !== before.owner) {
    if (caller.userId !== before.owner) throw accessDenied('only the account owner may hand the account to another user')
    const next = typeof rec.owner === 'string' ? context.get(OWNER_TYPE, rec.owner) : undefined
    if (typeof rec.owner === 'string' && next === undefined) return // no such user: the reference check answers 412
    const fit = next !== undefined && next.trashItem === null && Object.keys(OWNER_KEEPS).every((name) => next[name] === OWNER_KEEPS[name])
    if (!fit) throw accessDenied('the account can be handed only to an active admin who is not in the trash')
  }
}

/** Throws 403 unless the caller may store `rec` (replacing `before`, if any). */
export function checkWrite(caller: Caller, decl: ResourceDecl, rec: Rec, before: Rec | undefined, context: PolicyContext): void {
  if (decl.internal) throw accessDenied(`${decl.type} cannot be written directly`)
  if (!canSee(caller, decl, rec, context) || (before !== undefined && !canSee(caller, decl, before, context))) {
    throw accessDenied(`no access to this ${decl.type}`)
  }
  checkAccountOwnership(caller, decl, rec, before, context)
  if (caller.superuser) return
  if (!allowedByRule(caller, decl, rec, before, context)) throw accessDenied(`you may not change this ${decl.type}`)
}

/**
 * Whether the caller may change `rec` as it is (the `@editable` views): what checkWrite allows for a write that
 * keeps every field, answered without throwing.
 */
export function mayChange(caller: Caller, decl: ResourceDecl, rec: Rec, context: PolicyContext): boolean {
  if (decl.internal || !canSee(caller, decl, rec, context)) return false
  if (isAccountOwnerRecord(decl, rec, context) && caller.userId !== rec.id) return false
  return caller.superuser || allowedByRule(caller, decl, rec, rec, context)
}

/** Whether the caller may change the user `userId` at all: a superuser, and for the account owner only the owner. */
function managesUser(caller: Caller, userId: unknown, context: PolicyContext): boolean {
  return caller.superuser && (userId !== accountOwnerId(context) || userId === caller.userId)
}

/**
 * Whether the caller may remove `rec` without seeing it: a record of a resource revocable by the managers of its
 * user (a secret key), and the caller a superuser who may change that user.
 */
export function mayRevoke(caller: Caller, decl: ResourceDecl, rec: Rec, context: PolicyContext): boolean {
  return decl.revocableBy === 'managersOfUser' && typeof rec.user === 'string' && managesUser(caller, rec.user, context)
}

/** Throws 403 unless the caller may remove `rec`. */
export function checkRemove(caller: Caller, decl: ResourceDecl, rec: Rec, context: PolicyContext): void {
  if (isAccountOwnerRecord(decl, rec, context)) {
    throw accessDenied(`the account owner's ${decl.type} cannot be deleted: the account needs its owner (the owner may hand the account to another user first)`)
  }
  if (mayRevoke(caller, decl, rec, context)) return
  checkWrite(caller, decl, rec, rec, context)
  if (decl.writeRule === 'self' && !caller.superuser) throw accessDenied(`you may not delete this ${decl.type}`)
}
