/*
 * Request bodies: JSON by default, XML with `Content-Type: application/xml`
 * (or text/xml); a PATCH's also as `application/merge-patch+json` (RFC
 * 7396). XML values arrive as text and are converted by the field
 * declarations (source 'text'). Malformed bodies are 400; other content
 * types on calls that take an object are 415, and so is a body sent with a
 * Content-Encoding (none is decoded: the answer says `Accept-Encoding:
 * identity`). A body without a Content-Type is read as JSON.
 *
 * Nesting is bounded (MAX_BODY_NESTING levels of objects and arrays, or of
 * XML elements) before anything recursive sees a body: JSON text is
 * scanned for its depth before it is parsed (a megabyte of `[` parsed for
 * half a second, and a batch item's body that deep overflowed the stack
 * when it was written out again), XML is checked once parsed. Past the
 * bound, 400.
 */
import { XMLParser, XMLValidator } from 'fast-xml-parser'
import { ApiError } from '../domain/errors.js'
import { isPlainObject, type ValueSource } from '../domain/input.js'
import type { ApiRequest } from './request.js'

const xmlParser = new XMLParser({ ignoreAttributes: true, parseTagValue: false, trimValues: true, processEntities: true })

/** The deepest nesting of objects and arrays (or XML elements) a body may have; API bodies need a handful. */
export const MAX_BODY_NESTING = 64

const QUOTE = 0x22
const BACKSLASH = 0x5c
const OPEN_BRACE = 0x7b
const OPEN_BRACKET = 0x5b
const CLOSE_BRACE = 0x7d
const CLOSE_BRACKET = 0x5d

/** Whether JSON text nests objects and arrays deeper than `limit`, read in one pass outside its strings. */
function jsonNestsDeeperThan(text: string, limit: number): boolean {
  let depth = 0
  let inString = false
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index)
    if (inString) {
      if (code === BACKSLASH) index += 1
      else if (code === QUOTE) inString = false
    } else if (code === QUOTE) inString = true
    else if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      depth += 1
      if (depth > limit) return true
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) depth -= 1
  }
  return false
}

/** Whether a parsed value nests objects and arrays deeper than `limit` (walked without recursion). */
function valueNestsDeeperThan(value: unknown, limit: number): boolean {
  const pending: { value: unknown; depth: number }[] = [{ value, depth: 1 }]
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (typeof next.value !== 'object' || next.value === null) continue
    if (next.depth > limit) return true
    for (const inner of Object.values(next.value)) pending.push({ value: inner, depth: next.depth + 1 })
  }
  return false
}

function tooDeep(what: string): ApiError {
  return new ApiError('TL01-1105', `the ${what} nests deeper than ${MAX_BODY_NESTING} levels`)
}

/** JSON text parsed, or 400: malformed, or nested deeper than MAX_BODY_NESTING. `what` names it in the message. */
export function parseJsonText(text: string, what: string): unknown {
  if (jsonNestsDeeperThan(text, MAX_BODY_NESTING)) throw tooDeep(what)
  try {
    return JSON.parse(text) as unknown
  } catch (error) {
    throw new ApiError('TL01-1105', `the ${what} is malformed: ${error instanceof Error ? error.message : String(error)}`)
  }
}

export interface ParsedBody {
  value: unknown
  source: ValueSource
}

function contentTypeOf(request: ApiRequest): string {
  return (request.headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase() ?? ''
}

function isUtf8(bytes: Buffer): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes)
    return true
  } catch {
    return false
  }
}

/** The parser refuses some valid XML by throwing (nesting past its limit, `__proto__` and other reserved element names): a 400 too. */
function parseXml(text: string): Record<string, unknown> {
  try {
    return xmlParser.parse(text) as Record<string, unknown>
  } catch (error) {
    throw new ApiError('TL01-1105', `the XML body is refused: ${error instanceof Error ? error.message : String(error)}`)
  }
}

/** The media type of a JSON Merge Patch (RFC 7396), which a PATCH's body may have. */
const MERGE_PATCH_TYPE = 'application/merge-patch+json'

/** The bodies a PATCH takes, as its 415 names them (`Accept-Patch`, RFC 5789 §3.1). */
const ACCEPTED_PATCHES = `${MERGE_PATCH_TYPE}, application/json, application/xml`

export interface BodyOptions {
  /** The body of a PATCH: `application/merge-patch+json` is JSON too, and a 415 says what a PATCH takes. */
  readonly mergePatch?: boolean
}

export function parseBody(request: ApiRequest, options: BodyOptions = {}): ParsedBody {
  const type = contentTypeOf(request)
  const encoding = (request.headers.get('content-encoding') ?? 'identity').trim().toLowerCase()
  if (encoding !== 'identity' && encoding !== '') {
    throw new ApiError('TL01-9005', `content encoding '${encoding.slice(0, 40)}' is not supported; send the body uncompressed`, null, [], { 'Accept-Encoding': 'identity' })
  }
  if (!isUtf8(request.body)) throw new ApiError('TL01-1105', 'the body is not valid UTF-8')
  const text = request.body.toString('utf8')
  if (type === 'application/xml' || type === 'text/xml') {
    const valid = XMLValidator.validate(text)
    if (valid !== true) throw new ApiError('TL01-1105', `the XML body is malformed: ${valid.err.msg} (line ${valid.err.line})`)
    const document = parseXml(text)
    // The document object holds the root element: one level more than the body's own nesting.
    if (valueNestsDeeperThan(document, MAX_BODY_NESTING + 1)) throw tooDeep('XML body')
    const roots = Object.keys(document).filter((key) => key !== '?xml')
    const root = roots.length === 1 ? document[roots[0] as string] : undefined
    return { value: root === '' ? {} : root, source: 'text' }
  }
  if (type === MERGE_PATCH_TYPE && options.mergePatch === true) return parsedJson(text)
  if (type !== '' && type !== 'application/json' && type !== 'text/json' && type !== 'text/plain') {
    if (options.mergePatch === true) {
      throw new ApiError('TL01-9005', `content type '${type}' is not supported; send ${MERGE_PATCH_TYPE} (or application/json, or application/xml)`, null, [], { 'Accept-Patch': ACCEPTED_PATCHES })
    }
    throw new ApiError('TL01-9005', `content type '${type}' is not supported; send application/json or application/xml`)
  }
  return parsedJson(text)
}

function parsedJson(text: string): ParsedBody {
  if (text.trim() === '') return { value: undefined, source: 'json' }
  return { value: parseJsonText(text, 'JSON body'), source: 'json' }
}

/** A body that must be one object (create, update; with `mergePatch` a PATCH's, which may also be a JSON Merge Patch). */
export function parseObjectBody(request: ApiRequest, options: BodyOptions = {}): { value: Record<string, unknown>; source: ValueSource } {
  const { value, source } = parseBody(request, options)
  if (!isPlainObject(value)) throw new ApiError('TL01-1105', 'the body must be a single object')
  return { value, source }
}
