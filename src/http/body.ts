/*
 * Request bodies: JSON by default, XML with `Content-Type: application/xml`
 * (or text/xml). XML values arrive as text and are converted by the field
 * declarations (source 'text'). Malformed bodies are 400; other content
 * types on calls that take an object are 406.
 */
import { XMLParser, XMLValidator } from 'fast-xml-parser'
import { ApiError } from '../domain/errors.js'
import { isPlainObject, type ValueSource } from '../domain/input.js'
import type { ApiRequest } from './request.js'

const xmlParser = new XMLParser({ ignoreAttributes: true, parseTagValue: false, trimValues: true, processEntities: true })

export interface ParsedBody {
  value: unknown
  source: ValueSource
}

export function contentTypeOf(request: ApiRequest): string {
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

export function parseBody(request: ApiRequest): ParsedBody {
  const type = contentTypeOf(request)
  if (!isUtf8(request.body)) throw new ApiError('TL01-1105', 'the body is not valid UTF-8')
  const text = request.body.toString('utf8')
  if (type === 'application/xml' || type === 'text/xml') {
    const valid = XMLValidator.validate(text)
    if (valid !== true) throw new ApiError('TL01-1105', `the XML body is malformed: ${valid.err.msg} (line ${valid.err.line})`)
    const document = parseXml(text)
    const roots = Object.keys(document).filter((key) => key !== '?xml')
    const root = roots.length === 1 ? document[roots[0] as string] : undefined
    return { value: root === '' ? {} : root, source: 'text' }
  }
  if (type !== '' && type !== 'application/json' && type !== 'text/json' && type !== 'text/plain') {
    throw new ApiError('TL01-9005', `content type '${type}' is not supported; send application/json or application/xml`)
  }
  if (text.trim() === '') return { value: undefined, source: 'json' }
  try {
    return { value: JSON.parse(text) as unknown, source: 'json' }
  } catch (error) {
    throw new ApiError('TL01-1105', `the JSON body is malformed: ${error instanceof Error ? error.message : String(error)}`)
  }
}

/** A body that must be one object (create, update). */
export function parseObjectBody(request: ApiRequest): { value: Record<string, unknown>; source: ValueSource } {
  const { value, source } = parseBody(request)
  if (!isPlainObject(value)) throw new ApiError('TL01-1105', 'the body must be a single object')
  return { value, source }
}
