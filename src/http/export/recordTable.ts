/*
 * A list of records as an export (time records, and any other resource's
 * list, view or trash: the same mechanism). The columns come from the
 * resource's declaration, in its order, as the JSON answer shows the
 * fields: every field a client may read, a counter only when `append` asks
 * for it; a reference is two columns, `<field>/id` and
 * `<field>/displayName` (the name the JSON's expanded object shows), a list
 * of references the same with its elements joined by "; ".
 *
 * The records are found by the list's own plan (query/plan.ts: $filter,
 * $orderby, $skip, $top, views, inner collections), in one sliced read
 * (tenants/slicedRead.ts, charged to the tenant's heavy-read budget like
 * any long list), with a page of up to EXPORT_MAX_ROWS (all matching
 * records without $top). What it keeps is the matching records themselves,
 * which the state holds anyway (a stored record is never changed in place:
 * a change makes a new one, so the list is the answer as of that read).
 * The rows are then rendered RENDER_BATCH_ROWS at a time, each batch in a
 * short read of its own and only when the client took the bytes before it,
 * so the tenant's other requests go between the batches and the answer is
 * never whole in memory. A referenced object's name is read in its batch:
 * a project renamed during an export shows its new name from there on.
 */
import { accountOf } from '../../domain/account.js'
import { renderRecord, type OutObject, type RenderOptions } from '../../domain/render.js'
import type { FieldDecl, Rec, ResourceDecl } from '../../domain/schema.js'
import { OutDate } from '../../domain/values.js'
import type { Steps } from '../../domain/steps.js'
import type { TenantView } from '../../domain/tx.js'
import { andThen, type MaybePromise } from '../../maybePromise.js'
import { planList, type ListPlan, type ListScope } from '../../query/plan.js'
import type { Call, Principal, TenantAccess } from '../call.js'
import { requireSession } from '../requireSession.js'
import type { ApiResponse } from '../response.js'
import { exportAnswer } from './exportAnswer.js'
import type { ExportFormat } from './exportFormat.js'
import type { Cell, ColumnKind, ExportColumn, ExportTable, Row } from './table.js'

/** The most records one export writes (its page without $top, and the largest $top). */
const EXPORT_MAX_ROWS = 1_000_000
/** Rows rendered in one read (a millisecond or two of work). */
const RENDER_BATCH_ROWS = 256
const LIST_SEPARATOR = '; '

interface RecordColumn extends ExportColumn {
  /** The cell of a rendered record (`out`: renderRecord's output with stubs for references). */
  readonly cell: (out: OutObject) => Cell
}

function scalarKind(type: string): ColumnKind {
  if (type === 'Date') return 'date'
  if (type === 'Boolean') return 'boolean'
  if (type === 'Long' || type === 'Integer' || type === 'Double') return 'number'
  return 'text'
}

function scalarCell(value: unknown): Cell {
  if (value === null || value === undefined) return null
  if (value instanceof OutDate) return value.ms
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return value
  return JSON.stringify(value)
}

/** A property of a rendered reference (a stub, `{id}` for a missing object, or null). */
function referencePart(reference: unknown, part: 'id' | 'displayName'): Cell {
  if (typeof reference !== 'object' || reference === null) return null
  return scalarCell((reference as OutObject)[part])
}

function listPart(references: unknown, part: 'id' | 'displayName'): Cell {
  if (!Array.isArray(references) || references.length === 0) return null
  return references.map((reference) => referencePart(reference, part) ?? '').join(LIST_SEPARATOR)
}

function columnsOf(fieldDecl: FieldDecl): RecordColumn[] {
  const { name } = fieldDecl
  if (fieldDecl.ref !== undefined) {
    const part = fieldDecl.list ? listPart : referencePart
    return [
      { header: `${name}/id`, kind: 'text', cell: (out) => part(out[name], 'id') },
      { header: `${name}/displayName`, kind: 'text', cell: (out) => part(out[name], 'displayName') },
    ]
  }
  return [{ header: name, kind: scalarKind(fieldDecl.type), cell: (out) => scalarCell(out[name]) }]
}

/** The columns of a resource's export: its readable fields in declaration order; counters only those `append` asked for. */
function recordColumns(decl: ResourceDecl, appendedFields: ReadonlySet<string>): RecordColumn[] {
  const columns: RecordColumn[] = []
  for (const fieldDecl of decl.fields) {
    if (fieldDecl.access === 'WRITE_ONLY' || fieldDecl.access === 'INTERNAL') continue
    const counter = fieldDecl.computed && fieldDecl.derive === undefined && fieldDecl.name !== 'displayName'
    if (counter && !appendedFields.has(fieldDecl.name)) continue
    columns.push(...columnsOf(fieldDecl))
  }
  return columns
}

function renderRows(state: TenantView, decl: ResourceDecl, recs: readonly Rec[], columns: readonly RecordColumn[], options: RenderOptions): Row[] {
  // Stubs for references (their id and name are all a row shows), each rendered once per batch.
  const shared: RenderOptions = Object.assign({}, options, { noExpand: true, jsonDates: false, renderedJson: undefined, references: { embedded: new Map(), stubs: new Map() } })
  return recs.map((rec) => {
    const out = renderRecord(decl, rec, state, shared)
    return columns.map((column) => column.cell(out))
  })
}

async function* rowBatches(
  tenant: TenantAccess,
  decl: ResourceDecl,
  recs: readonly Rec[],
  columns: readonly RecordColumn[],
  optionsAt: (state: TenantView) => RenderOptions,
): AsyncGenerator<readonly Row[], void, undefined> {
  for (let start = 0; start < recs.length; start += RENDER_BATCH_ROWS) {
    const batch = recs.slice(start, start + RENDER_BATCH_ROWS)
    yield await tenant.read((state) => renderRows(state, decl, batch, columns, optionsAt(state)))
  }
}

interface Found {
  recs: Rec[]
  timeZone: string
}

function* foundSteps(plan: ListPlan, state: TenantView, principal: Principal, scope: ListScope, optionsAt: (state: TenantView) => RenderOptions): Steps<Found> {
  // The render options are made once here too: what they refuse (an `append` not offered) is refused before any byte.
  optionsAt(state)
  const recs = yield* plan.runSteps(state, principal, scope)
  return { recs, timeZone: String(accountOf(state).timeZone ?? 'UTC') }
}

/** The name of a resource's export file: the last segment of its path (`timerecords`). */
function fileNameOf(decl: ResourceDecl): string {
  return decl.path?.split('/').pop() ?? decl.type
}

/**
 * The export of a list: the records `scope` and the request's query select, as `format`. `optionsAt` gives the
 * render options against a state (the counters `append` asked for); `appendedFields` names those counters.
 */
export function listExport(
  call: Call,
  decl: ResourceDecl,
  scope: ListScope,
  format: ExportFormat,
  appendedFields: ReadonlySet<string>,
  optionsAt: (state: TenantView) => RenderOptions,
): MaybePromise<ApiResponse> {
  const { tenant, principal } = requireSession(call)
  const plan = planList(decl, call.request.query, EXPORT_MAX_ROWS)
  const columns = recordColumns(decl, appendedFields)
  return andThen(
    tenant.readInSlices((state) => foundSteps(plan, state, principal, scope, optionsAt)),
    ({ recs, timeZone }) => {
      const table: ExportTable = { name: fileNameOf(decl), timeZone, columns, rows: rowBatches(tenant, decl, recs, columns, optionsAt) }
      return exportAnswer(format, table)
    },
  )
}
