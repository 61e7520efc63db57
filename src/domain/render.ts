/*
 * Turning a stored record into what a client sees, driven by the
 * declaration: write-only fields never appear; dates become OutDate (JSON
 * `/Date(ms)/`, XML ISO 8601); references become the embedded object (whose
 * own references are stubs, so output is bounded) or, with no_expand, a
 * stub, a list of references an array of them; derived fields are computed from the record and the live
 * aggregates; counters filled by `append` come from live aggregates.
 *
 * A page of a list refers to the same few objects over and over (a hundred
 * time records of one project embed that project, its client and a handful
 * of users), so `renderList` renders each referenced object once per answer:
 * a memo keyed by the referenced record itself (an object key hashes by
 * identity, and a changed record is a new object, so an entry can never be
 * stale) hands the same output object to every row that embeds it.
 * Rendered objects are never changed afterwards, so sharing them is safe.
 * A JSON list goes further (`renderedJson`): each row and each referenced
 * object becomes its JSON text, kept across answers while the state is
 * unchanged (renderedJson.ts), and the answer is written from that text.
 *
 * Each rendered object starts as a copy of its declaration's output
 * template (every field it shows, in declaration order, worked out once):
 * set field by field, an object of thirty properties would fall into V8's
 * dictionary mode, which JSON.stringify serializes on its slow path.
 */
import type { JsonFragment } from '../json/fragment.js'
import type { RenderedJson } from './renderedJson.js'
import { resourceByType } from './resources/index.js'
import type { DisplayContext, FieldDecl, Rec, ResourceDecl } from './schema.js'
import { OutDate } from './values.js'

export type OutObject = { [field: string]: unknown }

export interface RenderOptions {
  noExpand: boolean
  /** Values of `append` counters for a record, keyed by field name. */
  counters?: (rec: Rec) => Record<string, number>
  /**
   * Dates as their JSON text `/Date(ms)/` already, for answers that are
   * JSON: JSON.stringify then meets no object with a toJSON method, which
   * keeps it on its fast path. Otherwise dates are OutDate (XML uses ISO).
   */
  jsonDates?: boolean
  /** Referenced objects already rendered in this answer (see renderList). */
  references?: ReferenceMemo
  /**
   * Rows and referenced objects as JSON text (JsonFragment) instead of
   * objects, for a JSON answer written by json/bytes.ts. Implies JSON dates.
   */
  renderedJson?: RenderedJson
}

/** Rendered referenced objects of one answer, by record: embedded (expanded) and stubs apart. */
interface ReferenceMemo {
  readonly embedded: Map<Rec, OutObject>
  readonly stubs: Map<Rec, OutObject>
}

function outValue(type: string, value: unknown, jsonDates: boolean): unknown {
  if (value === undefined) return null
  if (type === 'Date' && typeof value === 'number') return jsonDates ? `/Date(${value})/` : new OutDate(value)
  return value
}

/** The fields a full rendering and a stub show, and their templates (all null), by declaration. */
interface OutputShape {
  readonly full: readonly FieldDecl[]
  readonly fullTemplate: Readonly<OutObject>
  readonly stub: readonly FieldDecl[]
  readonly stubTemplate: Readonly<OutObject>
}

const shapes = new WeakMap<ResourceDecl, OutputShape>()

function outputShape(decl: ResourceDecl): OutputShape {
  let shape = shapes.get(decl)
  if (shape === undefined) {
    const full = decl.fields.filter((fieldDecl) => fieldDecl.access !== 'WRITE_ONLY' && fieldDecl.access !== 'INTERNAL')
    const stub = full.filter((fieldDecl) => fieldDecl.inStub)
    const templateOf = (fields: readonly FieldDecl[]) => Object.fromEntries(fields.map((fieldDecl) => [fieldDecl.name, null]))
    shape = { full, fullTemplate: templateOf(full), stub, stubTemplate: templateOf(stub) }
    shapes.set(decl, shape)
  }
  return shape
}

/** A stub: id, version, displayName and the parts of the display name. */
export function renderStub(decl: ResourceDecl, rec: Rec, context: DisplayContext, jsonDates = false): OutObject {
  const shape = outputShape(decl)
  const out: OutObject = { ...shape.stubTemplate }
  for (const fieldDecl of shape.stub) {
    out[fieldDecl.name] = fieldDecl.name === 'displayName' ? decl.displayName(rec, context) : outValue(fieldDecl.type, rec[fieldDecl.name], jsonDates)
  }
  return out
}

function renderReference(refType: string, id: unknown, context: DisplayContext, options: RenderOptions): OutObject | JsonFragment | null {
  if (typeof id !== 'string') return null
  const target = resourceByType(refType)
  const rec = context.get(refType, id)
  if (rec === undefined) return { id }
  const expand = !options.noExpand
  const jsonDates = options.jsonDates === true || options.renderedJson !== undefined
  const rendered = expand ? options.references?.embedded : options.references?.stubs
  const render = () => {
    const known = rendered?.get(rec)
    if (known !== undefined) return known
    const out = expand ? renderRecord(target, rec, context, { noExpand: true, jsonDates }) : renderStub(target, rec, context, jsonDates)
    rendered?.set(rec, out)
    return out
  }
  return options.renderedJson === undefined ? render() : options.renderedJson.of(rec, expand ? 'embedded' : 'stub', render)
}

/** A list of references as an array of referenced objects (an empty array when the list is unset). */
function renderReferences(refType: string, ids: unknown, context: DisplayContext, options: RenderOptions): (OutObject | JsonFragment | null)[] {
  if (!Array.isArray(ids)) return []
  return ids.map((id: unknown) => renderReference(refType, id, context, options))
}

export function renderRecord(decl: ResourceDecl, rec: Rec, context: DisplayContext, options: RenderOptions): OutObject {
  const counters = options.counters?.(rec)
  const jsonDates = options.jsonDates === true || options.renderedJson !== undefined
  const shape = outputShape(decl)
  const out: OutObject = { ...shape.fullTemplate }
  for (const fieldDecl of shape.full) {
    const name = fieldDecl.name
    if (name === 'displayName') out[name] = decl.displayName(rec, context)
    else if (fieldDecl.list) out[name] = renderReferences(fieldDecl.ref as string, fieldDecl.derive === undefined ? rec[name] : fieldDecl.derive(rec, context), context, options)
    else if (fieldDecl.derive !== undefined) out[name] = outValue(fieldDecl.type, fieldDecl.derive(rec, context), jsonDates)
    else if (fieldDecl.computed) out[name] = counters?.[name] ?? null
    else if (fieldDecl.ref !== undefined) out[name] = renderReference(fieldDecl.ref, rec[name], context, options)
    else out[name] = outValue(fieldDecl.type, rec[name], jsonDates)
  }
  return out
}

/**
 * One record as an answer of its own shows it. With `renderedJson` (a JSON
 * answer), a record read again since the last change is its row's JSON
 * text, kept like a list's rows; otherwise, and the first time, an object
 * without fragments, which JSON.stringify writes as it is.
 */
export function renderShown(decl: ResourceDecl, rec: Rec, context: DisplayContext, options: RenderOptions): OutObject | JsonFragment {
  const cache = options.renderedJson
  if (cache === undefined) return renderRecord(decl, rec, context, options)
  // No fragments inside: Object.assign, not a spread that removes a key (see the note on spreads in recordMaking.ts).
  const plain: RenderOptions = Object.assign({}, options, { renderedJson: undefined, jsonDates: true })
  // Counters depend on the viewer: such a rendering is not kept.
  if (options.counters !== undefined) return renderRecord(decl, rec, context, plain)
  cache.startAnswer()
  return cache.row(rec, options.noExpand ? 'rowWithStubs' : 'row', () => renderRecord(decl, rec, context, plain))
}

/**
 * The records of one list answer, each referenced object rendered once for
 * all rows (a single row needs no memo; with `renderedJson` the memo is
 * for what the cache does not keep). With `renderedJson` a row seen before
 * is JSON text, kept unless it shows counters (those depend on the viewer).
 */
export function renderList(decl: ResourceDecl, recs: readonly Rec[], context: DisplayContext, options: RenderOptions): (OutObject | JsonFragment)[] {
  // Object.assign, not a spread that adds `references`: see the note on spreads in recordMaking.ts.
  const shared: RenderOptions = recs.length < 2 ? options : Object.assign({}, options, { references: { embedded: new Map(), stubs: new Map() } })
  const cache = options.renderedJson
  cache?.startAnswer()
  if (cache === undefined || options.counters !== undefined) return recs.map((rec) => renderRecord(decl, rec, context, shared))
  const form = options.noExpand ? 'rowWithStubs' : 'row'
  return recs.map((rec) => cache.row(rec, form, () => renderRecord(decl, rec, context, shared)))
}
