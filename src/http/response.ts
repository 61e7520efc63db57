/*
 * Writing answers: JSON by default, XML on `format=xml` or `Accept:
 * application/xml`, JSONP on `.json?callback=`; dates in JSON as
 * `/Date(ms)/`, or ISO 8601 when the request asks (jsonDates.ts);
 * `suppress_response_code=true` turns every status into 200 with the
 * error in the body. Errors always have
 * the body of ARCHITECTURE.md §4 and are all written by errorResponse, from the
 * request's head alone (query, headers, `.json` suffix), so an error found
 * before the request is routed (unknown host or path, a body over the
 * limit) is written in the format the request asked for, like any other.
 * In XML the error's `constraintViolations` is one element with a
 * `constraintViolation` child per violation (empty when none). A JSON list
 * is serialized a chunk of elements at a time, straight to bytes, and only
 * a JSON list may hold JsonFragments (json/bytes.ts). An export (CSV, XLSX:
 * http/export/) has a streamed body; an answer that offers none refuses a
 * request that accepts nothing else (406, export/exportFormat.ts).
 */
import { XMLBuilder } from 'fast-xml-parser'
import { ApiError } from '../domain/errors.js'
import { isoDatesReplacer, OutDate } from '../domain/values.js'
import { jsonListBody } from '../json/bytes.js'
import { JsonFragment } from '../json/fragment.js'
import { exportNotOffered, exportRequired } from './export/exportFormat.js'
import type { FeedOutlet } from './changes/feedOutlet.js'
import { ISO_DATES_PARAMETER, jsonDateFormOf } from './jsonDates.js'
import type { ApiRequest } from './request.js'
import type { StreamedBody } from './streamedBody.js'

export interface ApiResponse {
  status: number
  headers: Record<string, string>
  /** A streamed body is written as it is made (streamedBody.ts): exports. */
  body: string | Buffer | StreamedBody
  /** Set on error answers (whatever status suppress_response_code gave them). */
  error?: ApiError
  /** The change feed asked as a WebSocket: the listener upgrades the connection and starts it (changes/). */
  webSocket?: WebSocketStart
}

/**
 * Starts a change feed on the WebSocket the listener opened for it (routes/changes.ts, or a feed forwarded to the node
 * holding the tenant: changes/forwardedWebSocket.ts); `gone` tells it the client closed, with the client's code and reason.
 */
export type WebSocketStart = (outlet: FeedOutlet) => { gone(code?: number, reason?: string): void }

/** An answer whose body is all there (every answer but an export's). */
export type WholeResponse = ApiResponse & { body: string | Buffer }

export type Format = 'json' | 'xml' | 'jsonp'

/** What of a request decides how its answer is written. */
export type RequestHead = Pick<ApiRequest, 'query' | 'headers' | 'jsonpSuffix'>

/** The head of a caller that asks for no format (the admin listener): plain JSON with real status codes. */
const NO_FORMAT: RequestHead = { query: new Map(), headers: new Map(), jsonpSuffix: false }

const CALLBACK_NAME = /^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*$/

export function formatOf(request: RequestHead): Format {
  const format = request.query.get('format')
  if (request.jsonpSuffix && request.query.has('callback')) return 'jsonp'
  if (format === 'xml') return 'xml'
  if (format === 'json') return 'json'
  const accept = request.headers.get('accept') ?? ''
  if (/\b(?:application|text)\/xml\b/.test(accept) && !/\bapplication\/json\b/.test(accept)) return 'xml'
  return 'json'
}

const xmlBuilder = new XMLBuilder({ ignoreAttributes: true, format: false, suppressEmptyNode: false })

/**
 * The characters XML 1.0 cannot carry, even escaped: C0 controls other than tab, LF and CR, U+FFFE, U+FFFF, and
 * surrogates without their pair. A stored string may hold them (JSON can); in XML each becomes U+FFFD, so every XML
 * answer parses.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: these are the control characters XML 1.0 cannot carry, the ones this pattern exists to find
export const NOT_XML_CHARS = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g

/** Dates become ISO text, nulls empty elements, and characters XML cannot carry U+FFFD, for XML. */
function toXmlValue(value: unknown): unknown {
  if (typeof value === 'string') return value.replace(NOT_XML_CHARS, '\uFFFD')
  if (value instanceof OutDate) return value.toISOString()
  if (value === null || value === undefined) return ''
  if (Array.isArray(value)) return value.map(toXmlValue)
  if (typeof value === 'object') {
    const out: Record<string, unknown> = {}
    for (const [key, inner] of Object.entries(value)) out[key] = toXmlValue(inner)
    return out
  }
  return value
}

export interface XmlNames {
  /** Root element of a single object, or of a list. */
  root: string
  /** Element of each list item. */
  item?: string
}

function renderXml(data: unknown, names: XmlNames): string {
  const content = Array.isArray(data) ? { [names.item ?? 'item']: data.map(toXmlValue) } : toXmlValue(data)
  return `<?xml version="1.0" encoding="UTF-8"?>${xmlBuilder.build({ [names.root]: content }) as string}`
}

function statusFor(request: RequestHead, status: number): number {
  return request.query.get('suppress_response_code') === 'true' ? 200 : status
}

/** An answer with data; 406 when the request accepts only an export, which this answer is not (export/). */
export function dataResponse(request: RequestHead, data: unknown, names: XmlNames, status = 200, headers: Record<string, string> = {}): ApiResponse {
  const insisted = exportRequired(request)
  if (insisted !== null) return errorResponse(request, exportNotOffered(insisted, 'this answer is not a list, summary or report'))
  return renderedData(request, data, names, status, headers)
}

function renderedData(request: RequestHead, data: unknown, names: XmlNames, status: number, headers: Record<string, string>): WholeResponse {
  const format = formatOf(request)
  if (format === 'xml') {
    return { status: statusFor(request, status), headers: { 'Content-Type': 'application/xml; charset=utf-8', ...headers }, body: renderXml(data, names) }
  }
  if (format === 'jsonp') {
    const callback = request.query.get('callback') ?? ''
    if (!CALLBACK_NAME.test(callback) || callback.length > 128) {
      return errorResponse({ ...request, jsonpSuffix: false }, new ApiError('TL01-1105', 'callback must be a JavaScript identifier'))
    }
    const json = jsonDateFormOf(request) === 'iso' ? JSON.stringify(data, isoDatesReplacer) : JSON.stringify(data)
    return { status: statusFor(request, status), headers: { 'Content-Type': 'application/javascript; charset=utf-8', ...headers }, body: `${callback}(${json});` }
  }
  // Dates as ISO text when the request asks (jsonDates.ts): such an answer holds OutDates, never kept JSON text.
  if (jsonDateFormOf(request) === 'iso') {
    return { status: statusFor(request, status), headers: { 'Content-Type': `application/json; charset=utf-8; ${ISO_DATES_PARAMETER}`, ...headers }, body: JSON.stringify(data, isoDatesReplacer) }
  }
  const body = Array.isArray(data) ? jsonListBody(data) : data instanceof JsonFragment ? data.bytes : JSON.stringify(data)
  return { status: statusFor(request, status), headers: { 'Content-Type': 'application/json; charset=utf-8', ...headers }, body }
}

export function textResponse(request: RequestHead, text: string, headers: Record<string, string> = { 'Content-Type': 'text/plain; charset=utf-8' }): ApiResponse {
  return { status: statusFor(request, 200), headers, body: text }
}

function errorBody(error: ApiError): Record<string, unknown> {
  return {
    status: error.status,
    code: error.code,
    message: error.message,
    description: error.description,
    constraintViolation: error.constraintViolations[0] ?? null,
    constraintViolations: error.constraintViolations,
  }
}

/** The error body for XML: a list inside an object needs an element per item to survive (an empty one would vanish). */
function xmlErrorBody(error: ApiError): Record<string, unknown> {
  return Object.assign({}, errorBody(error), { constraintViolations: { constraintViolation: error.constraintViolations } })
}

/** Every error answer, in the format, JSONP callback and status handling the request asked for. */
export function errorResponse(request: RequestHead, error: ApiError): WholeResponse {
  const body = formatOf(request) === 'xml' ? xmlErrorBody(error) : errorBody(error)
  return Object.assign(renderedData(request, body, { root: 'error' }, error.status, error.headers), { error })
}

/** An error for a caller that asks for no format (the admin listener). */
export function plainErrorResponse(error: ApiError): WholeResponse {
  return errorResponse(NO_FORMAT, error)
}

export function internalError(requestId: string): ApiError {
  return new ApiError('TL01-9001', 'internal error', `request id ${requestId}`)
}
