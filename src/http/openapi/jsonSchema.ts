/*
 * The JSON Schema vocabulary the OpenAPI 3.1 description is written in
 * (3.1 uses JSON Schema draft 2020-12 as it is): a schema is a plain
 * object, `null` is a type of its own (`type: ['string', 'null']`), and a
 * component is referred to by `$ref`. Only the few builders the other
 * files of this folder share live here.
 */

export type JsonSchema = { [keyword: string]: unknown }

/** A `$ref` to a schema of `components.schemas`. */
export function schemaRef(name: string): JsonSchema {
  return { $ref: `#/components/schemas/${name}` }
}

/** `schema`, or null. */
export function nullable(schema: JsonSchema): JsonSchema {
  const type = schema.type
  if (typeof type === 'string') return { ...schema, type: [type, 'null'], ...(Array.isArray(schema.enum) ? { enum: [...(schema.enum as unknown[]), null] } : {}) }
  return { anyOf: [schema, { type: 'null' }] }
}

/** An object whose listed properties are all required (answers the server always fills). */
export function closedObject(properties: Record<string, JsonSchema>, description?: string): JsonSchema {
  return { type: 'object', ...(description === undefined ? {} : { description }), properties, required: Object.keys(properties), additionalProperties: false }
}

/** A date as JSON answers carry it: `/Date(<ms since 1970>)/`, or ISO 8601 text when the request asks (`dates=iso`). */
export const JSON_DATE: JsonSchema = {
  anyOf: [
    { type: 'string', pattern: '^/Date\\(-?\\d+\\)/$', examples: ['/Date(1735689600000)/'] },
    { type: 'string', format: 'date-time', description: 'with dates=iso', examples: ['2025-01-01T00:00:00.000Z'] },
  ],
}

/** A date in a request: `/Date(ms)/`, or ISO 8601 text. */
export const INPUT_DATE: JsonSchema = { type: 'string', description: '`/Date(<ms>)/` or ISO 8601 (`2025-01-31T09:00:00Z`)', examples: ['2025-01-31T09:00:00Z'] }
