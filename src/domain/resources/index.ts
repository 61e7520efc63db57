/*
 * The registry of declared resources: look a declaration up by type name or
 * by any of its paths. Adding a resource is adding its file and one line here.
 * At load, the invariants below check that every reference, cascade (and part saved with its parent), append
 * counter, inner collection and live sum names declared types and fields, that
 * every global-index table and directory marker (globalFeed.ts) is fed by
 * exactly one resource, and that write options are named once per resource.
 */
import { assert, assertionFailed } from '../../assert.js'
import { DIRECTORY_MARKERS, GLOBAL_INDEX_TABLES } from '../globalFeed.js'
import type { ResourceDecl } from '../schema.js'
import { Access } from './access.js'
import { Account } from './account.js'
import { AuthToken } from './authToken.js'
import { Bill } from './bill.js'
import { BillItem } from './billItem.js'
import { BillVat } from './billVat.js'
import { CalendarSecret } from './calendarSecret.js'
import { Client } from './client.js'
import { ContactPerson } from './contactPerson.js'
import { Department } from './department.js'
import { DepartmentMember } from './departmentMember.js'
import { Expense } from './expense.js'
import { ExpenseType } from './expenseType.js'
import { ExternalSystem } from './externalSystem.js'
import { FileMetadata } from './fileMetadata.js'
import { Impulse } from './impulse.js'
import { KeptAnswer } from './keptAnswer.js'
import { Lock } from './lock.js'
import { PasswordConfirmation } from './passwordConfirmation.js'
import { Project } from './project.js'
import { ProjectMember } from './projectMember.js'
import { ProjectWorkTypeLink } from './projectWorkTypeLink.js'
import { SecretKey } from './secretKey.js'
import { SpendingTimeUnit } from './spendingTimeUnit.js'
import { StorageEntry } from './storageEntry.js'
import { Tag } from './tag.js'
import { Task } from './task.js'
import { TimePriceList } from './timePriceList.js'
import { TimeRecord } from './timeRecord.js'
import { TrashItem } from './trashItem.js'
import { User } from './user.js'
import { Webhook } from './webhook.js'
import { WebhookDelivery } from './webhookDelivery.js'
import { WorkType } from './workType.js'

export const RESOURCES: readonly ResourceDecl[] = [
  Access,
  Account,
  AuthToken,
  Bill,
  BillItem,
  BillVat,
  CalendarSecret,
  Client,
  ContactPerson,
  Department,
  DepartmentMember,
  Expense,
  ExpenseType,
  ExternalSystem,
  FileMetadata,
  Impulse,
  KeptAnswer,
  Lock,
  PasswordConfirmation,
  Project,
  ProjectMember,
  ProjectWorkTypeLink,
  SecretKey,
  SpendingTimeUnit,
  StorageEntry,
  Tag,
  Task,
  TimePriceList,
  TimeRecord,
  TrashItem,
  User,
  Webhook,
  WebhookDelivery,
  WorkType,
]

const byType = new Map(RESOURCES.map((decl) => [decl.type, decl]))
const byPath = new Map<string, ResourceDecl>()
for (const decl of RESOURCES) {
  for (const path of [decl.path, ...decl.aliases]) if (path !== null && !decl.internal) byPath.set(path, decl)
}

export function resourceByType(type: string): ResourceDecl {
  const decl = byType.get(type)
  if (decl === undefined) assertionFailed(`unknown resource type ${type}`)
  return decl
}

export function findResourceByType(type: string): ResourceDecl | undefined {
  return byType.get(type)
}

export function resourceByPath(path: string): ResourceDecl | undefined {
  return byPath.get(path)
}

/** Every path prefix a resource answers on, longest first, for the router. */
export const RESOURCE_PATHS: readonly string[] = [...byPath.keys()].sort((a, b) => b.length - a.length)

// Invariants, checked once at load.

/** A child type declared with a reference field `via` to the parent type. */
function checkChildLink(parent: ResourceDecl, what: string, childType: string, via: string | undefined): void {
  const child = byType.get(childType)
  assert(child !== undefined, `${parent.type} ${what} names undeclared type ${childType}`)
  const links = child.fields.filter((fieldDecl) => fieldDecl.ref === parent.type && fieldDecl.name !== 'trashItem')
  if (via === undefined) assert(links.length > 0, `${parent.type} ${what}: ${childType} has no reference to ${parent.type}`)
  else
    assert(
      links.some((fieldDecl) => fieldDecl.name === via),
      `${parent.type} ${what}: ${childType}.${via} is not a reference to ${parent.type}`,
    )
}

const paths = new Set<string>()
for (const decl of RESOURCES) {
  for (const path of [decl.path, ...decl.aliases]) {
    if (path === null) continue
    assert(!paths.has(path), `path ${path} is declared twice`)
    paths.add(path)
  }
  for (const fieldDecl of decl.fields) {
    assert(fieldDecl.ref === undefined || byType.has(fieldDecl.ref), `${decl.type}.${fieldDecl.name} references undeclared type ${fieldDecl.ref}`)
  }
  for (const childType of decl.cascades) checkChildLink(decl, 'cascade', childType, undefined)
  for (const childType of decl.savedWith) checkChildLink(decl, 'savedWith', childType, undefined)
  for (const counter of decl.appends) {
    checkChildLink(decl, `append ${counter.name}`, counter.childType, counter.via)
    assert(decl.fieldsByName.get(counter.field)?.computed === true, `${decl.type} append ${counter.name} fills ${counter.field}, which is not a computed field`)
  }
  for (const inner of decl.inner) checkChildLink(decl, `inner collection ${inner.name}`, inner.childType, inner.via)
  for (const sum of decl.sums) checkChildLink(decl, `sum ${sum.name}`, sum.childType, sum.via)
}

/** Each global-index table and directory marker fed by exactly one resource; write options named once per resource. */
export function checkFeedsAndWriteOptions(decls: readonly ResourceDecl[]): void {
  for (const table of GLOBAL_INDEX_TABLES) {
    const feeders = decls.filter((decl) => decl.globalIndex?.table === table).map((decl) => decl.type)
    assert(feeders.length === 1, `the global index ${table} is fed by ${feeders.length === 0 ? 'no resource' : feeders.join(', ')}: it needs exactly one`)
  }
  for (const marker of DIRECTORY_MARKERS) {
    const setters = decls.filter((decl) => decl.directoryMarker?.marker === marker).map((decl) => decl.type)
    assert(setters.length === 1, `the directory marker ${marker} is set by ${setters.length === 0 ? 'no resource' : setters.join(', ')}: it needs exactly one`)
  }
  for (const decl of decls) {
    const params = decl.writeOptions.map((option) => option.param)
    assert(new Set(params).size === params.length, `${decl.type} declares a write option twice`)
    for (const param of params) assert(/^[a-z][a-z_]*$/.test(param), `${decl.type} write option ${param} is not a lower-case query parameter name`)
  }
}

checkFeedsAndWriteOptions(RESOURCES)
