/*
 * Making and changing records, the same way for every resource: a new
 * record has every stored field of its declaration in declaration order
 * (one object shape per resource keeps memory small), defaults applied,
 * version 1; a change makes a new record object (records are never mutated
 * in place — snapshots and undo rely on that) with version + 1.
 *
 * A note on spreads, for this file and every write path: in V8 (Node 20),
 * an object literal that spreads an object and then adds keys it lacks
 * (`{ ...a, ...b }`, `{ ...values, id }`) gets a hidden class of its own
 * on every evaluation once its site is warm. Each such object costs a new
 * map, and every function that reads it then misses its inline caches (a
 * record built from one took 8 µs instead of 0.5). Object.assign({}, a, b) keeps one shape.
 * A spread whose added keys are all already in the spread object
 * (`{ ...rec, trashItem }`) is fine, and the fastest copy.
 */
import crypto from 'node:crypto'
import { ApiError } from './errors.js'
import { checkRecord, defaults } from './input.js'
import type { Caller } from './caller.js'
import type { ChangeSession, Rec, ResourceDecl } from './schema.js'
import type { Tx } from './tx.js'

export function newId(): string {
  return crypto.randomUUID()
}

/** True when the object exists and is not in the trash. */
export function isLive(tx: { state: { get(type: string, id: string): Rec | undefined } }, type: string, id: string): boolean {
  const rec = tx.state.get(type, id)
  return rec !== undefined && rec.trashItem === null
}

/**
 * What every new record of a declaration starts from, worked out once: the
 * stored fields with their defaults (and the fields every record has), in
 * declaration order. A new record is a copy of this template with the given
 * values written over it. Built field by field, an object of some thirty
 * properties falls into V8's dictionary mode (a hash table per record:
 * larger, slower to read and to serialize); a copy of a template keeps the
 * template's fast shape, so every record of a resource shares one.
 */
interface RecordTemplate {
  readonly fields: readonly string[]
  readonly template: Readonly<Record<string, unknown>>
}

/** The fields every record has, whatever its declaration says. */
const RECORD_FIELDS = ['id', 'version', 'createdAt', 'updatedAt', 'trashItem']

const templates = new WeakMap<ResourceDecl, RecordTemplate>()

function recordTemplate(decl: ResourceDecl): RecordTemplate {
  let known = templates.get(decl)
  if (known === undefined) {
    const defaultValues = defaults(decl)
    const fields = decl.fields.filter((fieldDecl) => !fieldDecl.computed).map((fieldDecl) => fieldDecl.name)
    // In one go: properties added to the template one by one could put it into dictionary mode itself.
    const names = [...fields, ...RECORD_FIELDS.filter((name) => !fields.includes(name))]
    const template = Object.fromEntries(names.map((name) => [name, defaultValues[name] ?? null]))
    known = { fields, template }
    templates.set(decl, known)
  }
  return known
}

/** The fields every record of the declaration holds, in their order (the engine keeps a column for each: engine/columnTable.ts). */
export function recordFieldNames(decl: ResourceDecl): readonly string[] {
  return Object.keys(recordTemplate(decl).template)
}

/** What a field of recordFieldNames holds in a new record (its default, or null), as recordFromFields gives it to a field the entry lacks. */
export function recordFieldDefault(decl: ResourceDecl, name: string): unknown {
  return recordTemplate(decl).template[name]
}

/**
 * A record decoded from the log, copied into its declaration's shape. The
 * decoder builds each record key by key, so it arrives as a hash table
 * (dictionary mode); stored like that, it would stay one, slow to read on every
 * scan, report and render. Every field is the decoded one; a stored field the
 * entry lacks (written before the field was declared) gets its default.
 */
export function inRecordShape(decl: ResourceDecl, decoded: Rec): Rec {
  return Object.assign({ ...recordTemplate(decl).template }, decoded)
}

/**
 * A record logged as field names and values (log formats 2 and 3: persist/codec.ts)
 * in its declaration's shape: a copy of the template with each value
 * written over it by name, so a stored field the entry lacks gets its
 * default, as in inRecordShape.
 */
export function recordFromFields(decl: ResourceDecl, names: readonly string[], values: readonly unknown[]): Rec {
  const rec: Record<string, unknown> = { ...recordTemplate(decl).template }
  for (let at = 0; at < names.length; at += 1) rec[names[at] as string] = values[at]
  return rec as Rec
}

export function buildRecord(decl: ResourceDecl, values: Record<string, unknown>, now: number): Rec {
  const { fields, template } = recordTemplate(decl)
  const rec: Record<string, unknown> = { ...template }
  for (const name of fields) {
    const value = values[name]
    if (value !== undefined) rec[name] = value
  }
  rec.id = typeof values.id === 'string' ? values.id : newId()
  rec.version = 1
  rec.createdAt = now
  rec.updatedAt = now
  rec.trashItem = null
  return rec as Rec
}

/**
 * Validates and stores a new record; 412 for a taken id or any violation.
 * The declaration's onCreate hook sees the record first; `creator` is the
 * caller of a request (null for internal writes such as sign-up).
 */
export function insertRecord(tx: Tx, decl: ResourceDecl, values: Record<string, unknown>, creator: Caller | null = null): Rec {
  const built = buildRecord(decl, values, tx.now)
  if (tx.state.get(decl.type, built.id) !== undefined) {
    throw new ApiError('TL01-1104', `${decl.type} with id '${built.id}' already exists`, null, [
      { entityType: decl.type, field: 'id', constraint: 'Unique', message: `${decl.type}.id '${built.id}' is already taken` },
    ])
  }
  const rec = decl.onCreate === undefined ? built : decl.onCreate(tx, built, creator)
  checkRecord(decl, rec, (type, id) => isLive(tx, type, id))
  checkUnique(tx, decl, rec)
  tx.put(decl.type, rec)
  return rec
}

/**
 * Stores a new internal record keyed by a secret's SHA-256 (an AuthToken, a
 * PasswordConfirmation): built like every record (buildRecord), but not
 * checked against the declaration, whose id pattern is that of the UUIDs
 * every other object has. The write that calls it decides its values.
 */
export function putKeyedRecord(tx: Tx, decl: ResourceDecl, id: string, values: Record<string, unknown>): Rec {
  const rec = buildRecord(decl, Object.assign({}, values, { id }), tx.now)
  tx.put(decl.type, rec)
  return rec
}

/**
 * Applies changed fields to a record: a new object, version + 1, validated; then the declaration's onChange
 * hook, told the session `by` which the change was made (a password change keeps that one, sessions.ts).
 */
export function changeRecord(tx: Tx, decl: ResourceDecl, before: Rec, values: Record<string, unknown>, by: ChangeSession | null = null): Rec {
  const after: Rec = { ...before, ...values, id: before.id, version: before.version + 1, updatedAt: tx.now }
  // A reference the record already had may stay even if its target went to the trash since.
  const keptReference = (type: string, id: string) => decl.fields.some((fieldDecl) => fieldDecl.ref === type && before[fieldDecl.name] === id)
  checkRecord(decl, after, (type, id) => isLive(tx, type, id) || keptReference(type, id))
  checkUnique(tx, decl, after)
  tx.put(decl.type, after)
  decl.onChange?.(tx, before, after, by)
  return after
}

/** 412 when another live record already has the same values in one of the declaration's unique field sets. */
export function checkUnique(tx: Tx, decl: ResourceDecl, rec: Rec): void {
  const collection = tx.state.collection(decl.type)
  for (const fields of decl.unique) {
    const [first, ...rest] = fields
    if (first === undefined || rec[first] === null || rec[first] === undefined) continue
    for (const other of collection.lookup(first, rec[first])) {
      if (other.id === rec.id || other.trashItem !== null || !rest.every((name) => other[name] === rec[name])) continue
      const names = fields.join(', ')
      throw new ApiError('TL01-1104', `another ${decl.type} already has the same ${names}`, null, [
        { entityType: decl.type, field: first, constraint: 'Unique', message: `${decl.type}.${names} must be unique` },
      ])
    }
  }
}
