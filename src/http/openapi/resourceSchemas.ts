/*
 * The schemas of the declared resources, read off their declarations with
 * the same reading `$metadata` uses (domain/metadata.ts: the fields a
 * client is told about, an enumeration's own type name), so the two
 * descriptions cannot disagree. Per resource type two schemas:
 *
 *   <Type>       an object as answers show it (render.ts): every field
 *                that is not write-only, always present, null when unset;
 *                dates `/Date(ms)/` (ISO 8601 with dates=iso); a reference is the referenced object
 *                (its own references as stubs) or, with `no_expand=true`,
 *                a stub (`ObjectStub`); a list of references an array.
 *   <Type>Input  a request body (POST, PUT, PATCH, `$calculateprice`): the
 *                fields a client may write, none required (a PUT names what
 *                it changes; a create may leave out what has a default, is
 *                derived or set by the server: its `user`, a time record's
 *                stop or duration); a default is said in the description,
 *                not as the `default` keyword, which generators read as
 *                "always present"; a reference as `{id}`; dates as
 *                `/Date(ms)/` or ISO text; `version` for the stale-version
 *                check.
 *
 * In request bodies constraints become JSON Schema keywords: Size →
 * minLength/maxLength, Pattern → pattern, Min/Max → minimum/maximum, Enum
 * → enum, Email → format email, and a NotNull field may not be null.
 * Answers name the enumerations' values too, and leave the other
 * constraints to the request schema: an answer shows what is stored, which
 * may predate a constraint; every field but `id` and `version` may be null
 * there.
 */
import { CURRENT_PASSWORD_FIELD } from '../../domain/passwordRules.js'
import { describedFields, shownType } from '../../domain/metadata.js'
import type { Constraint, FieldDecl, ResourceDecl } from '../../domain/schema.js'
import { INPUT_DATE, JSON_DATE, nullable, schemaRef, type JsonSchema } from './jsonSchema.js'

/** The schema of a scalar type, or null for a reference type. */
function scalarSchema(type: string, inRequest: boolean): JsonSchema | null {
  switch (type) {
    case 'String':
      return { type: 'string' }
    case 'Boolean':
      return { type: 'boolean' }
    case 'Long':
      return { type: 'integer', format: 'int64' }
    case 'Integer':
      return { type: 'integer', format: 'int32' }
    case 'Double':
      return { type: 'number', format: 'double' }
    case 'Date':
      return inRequest ? { ...INPUT_DATE } : { ...JSON_DATE }
    default:
      return null
  }
}

function withConstraint(schema: JsonSchema, constraint: Constraint): JsonSchema {
  switch (constraint.type) {
    case 'Size':
      return { ...schema, minLength: constraint.min, maxLength: constraint.max }
    case 'Pattern':
      return { ...schema, pattern: `^(?:${constraint.regexp})$` }
    case 'Min':
      return { ...schema, minimum: constraint.value }
    case 'Max':
      return { ...schema, maximum: constraint.value }
    case 'Enum':
      return { ...schema, enum: [...constraint.values] }
    case 'Email':
      return { ...schema, format: 'email' }
    case 'TimeZone':
      return { ...schema, description: `${String(schema.description ?? '')} (an IANA time zone name)`.trim() }
    case 'NotNull':
      return schema
  }
}

function isNotNull(fieldDecl: FieldDecl): boolean {
  return fieldDecl.constraints.some((constraint) => constraint.type === 'NotNull')
}

/** What a client reads of one field in an answer. */
function answerFieldSchema(fieldDecl: FieldDecl): JsonSchema {
  const described = { description: fieldDecl.description, ...(fieldDecl.access === 'READ_ONLY' ? { readOnly: true } : {}) }
  if (fieldDecl.ref !== undefined) {
    const referenced: JsonSchema = { anyOf: [schemaRef(fieldDecl.ref), schemaRef('ObjectStub')] }
    if (fieldDecl.list) return { ...described, type: 'array', items: referenced }
    return { ...described, anyOf: [schemaRef(fieldDecl.ref), schemaRef('ObjectStub'), { type: 'null' }] }
  }
  const scalar = scalarSchema(fieldDecl.type, false) ?? {}
  // Constraints hold for what a client writes; an answer may show a value stored before a constraint was added.
  const enumerated = fieldDecl.constraints.find((constraint) => constraint.type === 'Enum')
  const schema = { ...(enumerated === undefined ? scalar : withConstraint(scalar, enumerated)), ...described, ...(enumerated === undefined ? {} : { title: shownType(fieldDecl) }) }
  // The id and version of an object are always set; every other field may be unset (null).
  return fieldDecl.name === 'id' || fieldDecl.name === 'version' ? schema : nullable(schema)
}

/** What a client may write into one field. */
function requestFieldSchema(fieldDecl: FieldDecl): JsonSchema {
  // The default is told in words, not as the `default` keyword: generators (openapi-typescript by default) make a
  // property with a default required, and a body that leaves it out, as a create may, would not type-check.
  const described = {
    description: fieldDecl.defaultValue === undefined ? fieldDecl.description : `${fieldDecl.description} (default ${JSON.stringify(fieldDecl.defaultValue)} when a create leaves it out)`,
    ...(fieldDecl.access === 'WRITE_ONLY' ? { writeOnly: true } : {}),
  }
  if (fieldDecl.ref !== undefined) {
    if (fieldDecl.list) return { ...described, type: 'array', items: schemaRef('Reference') }
    return { ...described, anyOf: [schemaRef('Reference'), { type: 'null' }] }
  }
  let schema = scalarSchema(fieldDecl.type, true) ?? {}
  for (const constraint of fieldDecl.constraints) schema = withConstraint(schema, constraint)
  if (fieldDecl.constraints.some((constraint) => constraint.type === 'Enum')) schema = { ...schema, title: shownType(fieldDecl) }
  schema = { ...schema, ...described }
  return isNotNull(fieldDecl) ? schema : nullable(schema)
}

/** The fields an answer shows (render.ts: all but write-only ones). */
function shownFields(decl: ResourceDecl): FieldDecl[] {
  return describedFields(decl).filter((fieldDecl) => fieldDecl.access !== 'WRITE_ONLY')
}

/** The fields a request body may set: neither read-only nor computed (the server fills those). */
function writableFields(decl: ResourceDecl): FieldDecl[] {
  return describedFields(decl).filter((fieldDecl) => fieldDecl.access !== 'READ_ONLY' && !fieldDecl.computed)
}

export function answerSchemaOf(decl: ResourceDecl): JsonSchema {
  const properties: Record<string, JsonSchema> = {}
  for (const fieldDecl of shownFields(decl)) properties[fieldDecl.name] = answerFieldSchema(fieldDecl)
  return { type: 'object', title: decl.type, description: decl.description, properties, required: Object.keys(properties), additionalProperties: false }
}

export function requestSchemaOf(decl: ResourceDecl): JsonSchema {
  const properties: Record<string, JsonSchema> = {}
  for (const fieldDecl of writableFields(decl)) properties[fieldDecl.name] = requestFieldSchema(fieldDecl)
  // A password (a hashed field) of one's own changes only with the current one (domain/passwordRules.ts).
  if (decl.fields.some((fieldDecl) => fieldDecl.hashed)) {
    properties[CURRENT_PASSWORD_FIELD] = { type: 'string', writeOnly: true, description: 'your current password: needed to change your own password (never stored)' }
  }
  return { type: 'object', title: `${decl.type} (request body)`, description: `${decl.description}. Only the fields named are written; \`version\` is checked on PUT.`, properties }
}

/** The names of the two schemas of a resource type. */
export function answerSchemaName(type: string): string {
  return type
}

export function requestSchemaName(type: string): string {
  return `${type}Input`
}
