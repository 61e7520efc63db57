/*
 * The writes of the resource routes: create (POST), update (PUT, and PATCH
 * as a JSON Merge Patch), `$set` from the query, and DELETE (to the trash,
 * or for good). A body is read into field values and passwords hashed
 * outside the mailbox; the write itself is one domain operation in
 * `tenant.write`, behind the resource's write check (resourceWriteChecks.ts)
 * and the If-Match precondition (etagPreconditions.ts).
 */
import { ApiError } from '../../domain/errors.js'
import { checkPasswordLength, hashPassword } from '../../domain/credentials.js'
import { readFields, readVersion, type ValueSource } from '../../domain/input.js'
import { mergePatchFields } from '../../domain/mergePatch.js'
import { createObject } from '../../domain/operations/createObject.js'
import { checkRemovable, deleteObject } from '../../domain/operations/deleteObject.js'
import { checkExpectedVersion } from '../../domain/operations/expectedVersion.js'
import { fieldsFromText, setFields as setObjectFields } from '../../domain/operations/setFields.js'
import { type ExpectedVersion, updateObject } from '../../domain/operations/updateObject.js'
import { CURRENT_PASSWORD_FIELD } from '../../domain/passwordRules.js'
import { renderRecord } from '../../domain/render.js'
import type { Rec, ResourceDecl } from '../../domain/schema.js'
import { parseObjectBody } from '../body.js'
import type { Call, Principal } from '../call.js'
import { withObjectEtag } from '../etag.js'
import { ifMatchOf } from '../etagPreconditions.js'
import { DATES_OPTION } from '../jsonDates.js'
import { queryFlag } from '../request.js'
import { requireSession } from '../requireSession.js'
import type { ApiResponse } from '../response.js'
import { withKnownPassword } from './passwordProof.js'
import { type RouteWriteCheck, writeCheckOf } from './resourceWriteChecks.js'
import { writeOptionsOf } from './writeOptions.js'
import { appendedCounters, objectResponse, renderOptionsWith, writeAnswer, writtenCounters } from './resourceAnswers.js'

/** How a body names the values it writes: the fields of a create or a PUT, or a PATCH's JSON Merge Patch (domain/mergePatch.ts). */
export type BodyForm = 'create' | 'update' | 'mergePatch'

/**
 * Reads a body into field values, hashing passwords first (that is slow, so it happens outside the mailbox); `body`
 * is the body as sent (what else it says: a `currentPassword`).
 */
async function readBodyValues(
  call: Call,
  decl: ResourceDecl,
  form: BodyForm,
): Promise<{ values: Record<string, unknown>; version: number | null; source: ValueSource; body: Record<string, unknown> }> {
  const { value, source } = parseObjectBody(call.request, { mergePatch: form === 'mergePatch' })
  const values = form === 'mergePatch' ? mergePatchFields(decl, value, source) : readFields(decl, value, source, form === 'create')
  for (const fieldDecl of decl.fields) {
    const plain = values[fieldDecl.name]
    if (!fieldDecl.hashed || plain === undefined || plain === null) continue
    checkPasswordLength(plain, decl.type, fieldDecl.name)
    values[fieldDecl.name] = await hashPassword(plain, call.services.config.passwordCost)
  }
  return { values, version: readVersion(value, source), source, body: value }
}

/**
 * The session an update is made in: with the proof of the caller's password when the update sets a hashed field (a
 * password) of the caller's own record and the body gives `currentPassword` (passwordProof.ts; the domain decides
 * whether the change needs it: domain/passwordRules.ts).
 */
async function updateSession(call: Call, decl: ResourceDecl, id: string, principal: Principal, values: Record<string, unknown>, body: Record<string, unknown>) {
  const setsHashed = decl.fields.some((fieldDecl) => fieldDecl.hashed && values[fieldDecl.name] !== undefined)
  return setsHashed ? withKnownPassword(call, principal, id, body[CURRENT_PASSWORD_FIELD]) : principal
}

/** The record a write stores, once the resource's write check (resourceWriteChecks.ts) passed on it; a throw rolls the write back. */
function checked(call: Call, check: RouteWriteCheck | undefined, rec: Rec): Rec {
  check?.record(call, rec)
  return rec
}

export async function create(call: Call, decl: ResourceDecl, fixed: Record<string, unknown>): Promise<ApiResponse> {
  const { tenant, principal } = requireSession(call)
  if (!decl.creatable) throw new ApiError('TL01-1103', `${decl.type} objects cannot be created here`)
  const { values } = await readBodyValues(call, decl, 'create')
  const derive = writeOptionsOf(call.request, decl)
  const counters = writtenCounters(call, decl)
  const check = writeCheckOf(decl)
  await check?.values(call, values)
  const rec = await tenant.write((tx) => checked(call, check, createObject(tx, principal, decl, Object.assign({}, values, fixed), derive)))
  return writeAnswer(call, decl, rec, 201, counters)
}

/** The version a PUT or PATCH is checked against: none with version_ignore, else the body's; without it, If-Match or a refusal. */
function expectedVersion(versionIgnored: boolean, bodyVersion: number | null, hasIfMatch: boolean): ExpectedVersion {
  if (versionIgnored) return 'any'
  if (bodyVersion !== null) return bodyVersion
  return hasIfMatch ? 'any' : 'required'
}

/** PUT, and PATCH (`form` 'mergePatch'): the same update, its values read from the body each in its way. */
export async function update(call: Call, decl: ResourceDecl, id: string, fixed: Record<string, unknown>, form: BodyForm): Promise<ApiResponse> {
  const { tenant, principal: caller } = requireSession(call)
  const { values, version, body } = await readBodyValues(call, decl, form)
  Object.assign(values, fixed)
  const principal = await updateSession(call, decl, id, caller, values, body)
  // version_ignore=true overwrites the object at whatever version it is, even when the body names one (ARCHITECTURE.md §4).
  const versionIgnored = queryFlag(call.request, 'version_ignore')
  const derive = writeOptionsOf(call.request, decl)
  const counters = writtenCounters(call, decl)
  // If-Match (etagPreconditions.ts) names the version too: then the body need not.
  const expected = ifMatchOf(call.request)
  const check = writeCheckOf(decl)
  await check?.values(call, values)
  const rec = await tenant.write((tx) => {
    if (expected !== null) checkExpectedVersion(tx.state, principal, decl, id, expected)
    return checked(call, check, updateObject(tx, principal, decl, id, values, expectedVersion(versionIgnored, version, expected !== null), derive))
  })
  return writeAnswer(call, decl, rec, 200, counters)
}

/** `$set?field=value&…`: a PUT from query parameters; the version is checked only when the query names it (and not version_ignore). */
export async function setFields(call: Call, decl: ResourceDecl, id: string, fixed: Record<string, unknown>): Promise<ApiResponse> {
  const { tenant, principal } = requireSession(call)
  const reserved = new Set(['token', 'format', 'callback', 'suppress_response_code', 'response_object', 'no_expand', 'version', 'version_ignore', 'method', 'apikey', DATES_OPTION])
  const values = Object.assign(
    fieldsFromText(
      decl,
      [...call.request.query].filter(([name]) => !reserved.has(name)),
    ),
    fixed,
  )
  const versionText = call.request.query.get('version')
  const version = versionText === undefined || queryFlag(call.request, 'version_ignore') ? null : readVersion({ version: versionText }, 'text')
  const counters = appendedCounters(call, decl)
  const expected = ifMatchOf(call.request)
  const check = writeCheckOf(decl)
  await check?.values(call, values)
  const after = await tenant.write((tx) => {
    if (expected !== null) checkExpectedVersion(tx.state, principal, decl, id, expected)
    return checked(call, check, setObjectFields(tx, principal, decl, id, values, version))
  })
  return tenant.read((state) => withObjectEtag(call.request, after.version, objectResponse(call, decl, renderRecord(decl, after, state, renderOptionsWith(call, decl, state, counters)))))
}

export async function remove(call: Call, decl: ResourceDecl, id: string): Promise<ApiResponse> {
  const { tenant, principal } = requireSession(call)
  const hard = queryFlag(call.request, 'hard')
  checkRemovable(decl)
  const expected = ifMatchOf(call.request)
  const { trashItemId } = await tenant.write((tx) => {
    if (expected !== null) checkExpectedVersion(tx.state, principal, decl, id, expected, hard)
    return deleteObject(tx, principal, decl, id, hard)
  })
  return objectResponse(call, decl, trashItemId === null ? { id, deleted: true } : { id, trashItem: { id: trashItemId } })
}
