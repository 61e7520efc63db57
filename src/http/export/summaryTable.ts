/*
 * A summary (`…/summary?summary=[<groupedBy>;]<fn>;…`, query/summary.ts) as
 * an export: a row per group, the column `key` then one per function, named
 * as the request wrote it (`sum(duration)`). The JSON answer gives values
 * as text; here a value is a number, and the min, max or average of a date
 * field a date in the account's time zone.
 */
import { accountOf } from '../../domain/account.js'
import type { TenantView } from '../../domain/tx.js'
import type { SummaryEntry, SummaryPlan } from '../../query/summary.js'
import type { ApiResponse } from '../response.js'
import { exportAnswer } from './exportAnswer.js'
import type { ExportFormat } from './exportFormat.js'
import { plainTable, type PlainColumn } from './plainTable.js'
import type { Cell, ColumnKind } from './table.js'

const KEY_COLUMN = 'key'

function valueCell(value: string | null, kind: ColumnKind): Cell {
  if (value === null) return null
  const number = Number(value)
  if (value.trim() === '' || !Number.isFinite(number)) return value
  // The text of an instant lost its last millisecond to rounding at 6 decimals (past 2^53): an instant is whole ms.
  return kind === 'date' ? Math.round(number) : number
}

export function summaryExport(format: ExportFormat, name: string, state: TenantView, plan: SummaryPlan, entries: readonly SummaryEntry[]): ApiResponse {
  const columns: PlainColumn[] = [
    { header: KEY_COLUMN, kind: 'text' },
    ...plan.functions.map((fn): PlainColumn => ({ header: fn.name, kind: fn.path?.field.type === 'Date' && fn.aggregate !== 'sum' ? 'date' : 'number' })),
  ]
  const kinds = new Map(columns.map((column) => [column.header, column.kind]))
  const rows = entries.map((entry) => {
    const row: Record<string, Cell> = { [KEY_COLUMN]: entry.key }
    for (const summary of entry.summaries) row[summary.name] = valueCell(summary.value, kinds.get(summary.name) ?? 'number')
    return row
  })
  return exportAnswer(format, plainTable(name, String(accountOf(state).timeZone ?? 'UTC'), columns, rows))
}
