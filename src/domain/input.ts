/*
 * Reading a request body into a record, driven by the declaration: only
 * declared, writable fields are taken (unknown and read-only fields are
 * ignored, so `__proto__` and friends never reach a record); each value is
 * converted to its stored form or rejected with 400 naming the field; then
 * the whole record is checked against every constraint (412 with the
 * violations) and every reference must name an existing object of the same
 * tenant that is not in the trash. A list of references takes an array of
 * references (XML: the repeated element; text: ids separated by commas),
 * kept as distinct ids in the order given.
 */
import { assertionFailed } from '../assert.js'
import { ApiError, type ConstraintViolation, violation, wrongParameter } from './errors.js'
import type { FieldDecl, Rec, ResourceDecl } from './schema.js'
import { MAX_LIST_REFS } from './declare.js'
import { isEmail, isImpossibleIsoDate, parseDate } from './values.js'
import { isTimeZone } from './calendar.js'

/** Where a value comes from: JSON keeps its types; text (XML, query strings) is parsed. */
export type ValueSource = 'json' | 'text'

const MAX_STRING_LENGTH = 65_536

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** Converts one wire value to the stored form of the field; throws 400 when it cannot. */
export function convertValue(decl: ResourceDecl, fieldDecl: FieldDecl, raw: unknown, source: ValueSource): unknown {
  if (raw === null || (source === 'text' && raw === '' && fieldDecl.type !== 'String')) return null
  const bad = (expected: string) => wrongParameter(`${decl.type}.${fieldDecl.name} must be ${expected}`)
  if (fieldDecl.list) return convertRefList(raw, source, bad)
  if (fieldDecl.ref !== undefined) {
    if (isPlainObject(raw)) raw = raw.id
    if (raw === undefined || raw === null || raw === '') return null
    if (typeof raw !== 'string' || raw.length > 64) throw bad(`a reference {"id": "…"}`)
    if (fieldDecl.name === 'trashItem') {
      throw new ApiError(
        'TL01-1103',
        `${decl.type}.trashItem is set by deleting the object (DELETE moves it to the trash) and cleared by restoring it from the trash (GET /trash/{id}/$restore); write null or leave it out`,
      )
    }
    return raw
  }
  switch (fieldDecl.type) {
    case 'String':
      if (typeof raw === 'number' && source === 'text') return String(raw)
      if (typeof raw !== 'string') throw bad('a string')
      if (raw.length > MAX_STRING_LENGTH) throw bad(`at most ${MAX_STRING_LENGTH} characters`)
      return raw
    case 'Boolean':
      if (typeof raw === 'boolean') return raw
      if (source === 'text' && (raw === 'true' || raw === 'false')) return raw === 'true'
      throw bad('true or false')
    case 'Long':
    case 'Integer': {
      const value = source === 'text' && typeof raw === 'string' && /^-?\d+$/.test(raw.trim()) ? Number(raw) : raw
      if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw bad('an integer')
      if (fieldDecl.type === 'Integer' && Math.abs(value) > 2 ** 31) throw bad('a 32-bit integer')
      return value
    }
    case 'Double': {
      const value = source === 'text' && typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : raw
      if (typeof value !== 'number' || !Number.isFinite(value)) throw bad('a number')
      return value
    }
    case 'Date': {
      const value = parseDate(raw)
      if (value !== undefined) return value
      // Refused either way; a well-formed text naming a day that does not exist is a violation of the field (412).
      if (isImpossibleIsoDate(raw)) {
        const message = `${decl.type}.${fieldDecl.name} must be a day and time that exist ('${String(raw).trim()}' does not)`
        throw violation([{ entityType: decl.type, field: fieldDecl.name, constraint: 'Date', message }])
      }
      throw bad('a date (/Date(ms)/ or ISO 8601)')
    }
    default:
      return assertionFailed(`field ${decl.type}.${fieldDecl.name} has unknown type ${fieldDecl.type}`)
  }
}

/** A list of references as distinct ids; an XML element given once is a list of one, a text `a,b` a list of two. */
function convertRefList(raw: unknown, source: ValueSource, bad: (expected: string) => ApiError): string[] {
  let items: unknown = raw
  if (source === 'text' && typeof raw === 'string')
    items = raw
      .split(',')
      .map((part) => part.trim())
      .filter((part) => part !== '')
  else if (source === 'text' && isPlainObject(raw)) items = [raw]
  if (!Array.isArray(items)) throw bad('a list of references [{"id": "…"}, …]')
  if (items.length > MAX_LIST_REFS) throw bad(`a list of at most ${MAX_LIST_REFS} references`)
  const ids: string[] = []
  for (const item of items) {
    const id = isPlainObject(item) ? item.id : item
    if (typeof id !== 'string' || id === '' || id.length > 64) throw bad('a list of references [{"id": "…"}, …]')
    if (!ids.includes(id)) ids.push(id)
  }
  return ids
}

/** The writable fields present in a body, converted. `id` is taken only when creating. */
export function readFields(decl: ResourceDecl, body: Record<string, unknown>, source: ValueSource, creating: boolean): Record<string, unknown> {
  const values: Record<string, unknown> = Object.create(null) as Record<string, unknown>
  for (const fieldDecl of decl.fields) {
    if (!Object.hasOwn(body, fieldDecl.name)) continue
    if (fieldDecl.access === 'READ_ONLY' || fieldDecl.access === 'INTERNAL' || fieldDecl.computed || fieldDecl.name === 'version') continue
    if ((fieldDecl.name === 'id' || fieldDecl.setOnce) && !creating) continue
    values[fieldDecl.name] = convertValue(decl, fieldDecl, body[fieldDecl.name], source)
  }
  return values
}

/** Default values of a new record. */
export function defaults(decl: ResourceDecl): Record<string, unknown> {
  const values: Record<string, unknown> = {}
  for (const fieldDecl of decl.fields) {
    if (fieldDecl.defaultValue !== undefined) values[fieldDecl.name] = fieldDecl.defaultValue
  }
  return values
}

const compiledPatterns = new Map<string, RegExp>()

function fullMatch(regexp: string, value: string): boolean {
  let compiled = compiledPatterns.get(regexp)
  if (compiled === undefined) {
    compiled = new RegExp(`^(?:${regexp})$`)
    compiledPatterns.set(regexp, compiled)
  }
  return compiled.test(value)
}

function constraintViolations(decl: ResourceDecl, rec: Rec): ConstraintViolation[] {
  const violations: ConstraintViolation[] = []
  const add = (fieldDecl: FieldDecl, constraint: string, message: string) =>
    violations.push({ entityType: decl.type, field: fieldDecl.name, constraint, message: `${decl.type}.${fieldDecl.name} ${message}` })
  for (const fieldDecl of decl.fields) {
    if (fieldDecl.computed) continue
    const value = rec[fieldDecl.name]
    for (const constraint of fieldDecl.constraints) {
      if (constraint.type === 'NotNull') {
        if (value === null || value === undefined) add(fieldDecl, 'NotNull', 'may not be null')
        continue
      }
      if (value === null || value === undefined) continue
      switch (constraint.type) {
        case 'Size':
          if (typeof value === 'string' && (value.length < constraint.min || value.length > constraint.max)) {
            add(fieldDecl, 'Size', `size must be between ${constraint.min} and ${constraint.max}`)
          }
          break
        case 'Pattern':
          if (typeof value === 'string' && !fullMatch(constraint.regexp, value)) {
            add(fieldDecl, 'Pattern', `must match "${constraint.regexp}"`)
          }
          break
        case 'Min':
          if (typeof value === 'number' && value < constraint.value) add(fieldDecl, 'Min', `must be at least ${constraint.value}`)
          break
        case 'Max':
          if (typeof value === 'number' && value > constraint.value) add(fieldDecl, 'Max', `must be at most ${constraint.value}`)
          break
        case 'Email':
          if (typeof value === 'string' && !isEmail(value)) add(fieldDecl, 'Email', 'must be a well-formed e-mail address')
          break
        case 'Enum':
          if (typeof value === 'string' && !constraint.values.includes(value)) add(fieldDecl, 'Enum', `must be one of ${constraint.values.join(', ')}`)
          break
        case 'TimeZone':
          if (typeof value === 'string' && !isTimeZone(value)) add(fieldDecl, 'TimeZone', 'must be an IANA time zone name such as Europe/Berlin or UTC')
          break
      }
    }
  }
  if (decl.recordCheck !== undefined) {
    for (const broken of decl.recordCheck(rec)) {
      violations.push({ entityType: decl.type, field: broken.field, constraint: broken.constraint, message: `${decl.type}.${broken.field} ${broken.message}` })
    }
  }
  return violations
}

/** Adds a violation when `id` names no live object of the field's referenced type. */
function checkReference(decl: ResourceDecl, fieldDecl: FieldDecl, id: unknown, exists: (type: string, id: string) => boolean, violations: ConstraintViolation[]): void {
  const ref = fieldDecl.ref as string
  if (typeof id !== 'string' || exists(ref, id)) return
  violations.push({
    entityType: decl.type,
    field: fieldDecl.name,
    constraint: 'Reference',
    message: `${decl.type}.${fieldDecl.name} refers to ${ref} '${id}', which does not exist`,
  })
}

/** Checks constraints and references of a record about to be stored; throws 412 with every violation. */
export function checkRecord(decl: ResourceDecl, rec: Rec, exists: (type: string, id: string) => boolean): void {
  const violations = constraintViolations(decl, rec)
  for (const fieldDecl of decl.fields) {
    const value = rec[fieldDecl.name]
    if (fieldDecl.ref === undefined || fieldDecl.name === 'trashItem') continue
    if (!fieldDecl.list) checkReference(decl, fieldDecl, value, exists, violations)
    else if (Array.isArray(value)) for (const id of value) checkReference(decl, fieldDecl, id, exists, violations)
  }
  if (violations.length > 0) throw violation(violations)
}

/** Parses `version` of an update body; null when absent. */
export function readVersion(body: Record<string, unknown>, source: ValueSource): number | null {
  const raw = body.version
  if (raw === undefined || raw === null) return null
  const value = source === 'text' && typeof raw === 'string' ? Number(raw) : raw
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw new ApiError('TL01-1105', 'version must be an integer')
  return value
}
