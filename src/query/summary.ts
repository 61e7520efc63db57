/*
 * Summaries: `GET /{resource}/summary?summary=[<groupedBy>;]<fn>[;<fn>…]`.
 * Functions are count(), sum(path), avg(path), min(path), max(path) over
 * numbers and dates (dates as epoch ms); the optional first part groups by
 * any field path. The answer is one `{key, summaries: [{name, value}]}` per
 * group (key `*` when not grouped), values as text, groups sorted by key
 * (by code point).
 * sum and count of nothing are "0"; avg, min and max of nothing are null.
 * Grouped by a list of references (`tags/name`), a record counts in the
 * group of each of its elements (a record without any: in group `null`),
 * so the groups' counts may add up to more than the records.
 */
import { wrongParameter } from '../domain/errors.js'
import type { DisplayContext, Rec, ResourceDecl } from '../domain/schema.js'
import { runNow, type Steps } from '../engine/steps.js'
import { compareCodePoints } from './codePointOrder.js'
import { resolvePath, type ResolvedPath } from './fieldPath.js'
import { sortInSteps } from './sortInSteps.js'
import { CodeColumn } from '../engine/columns.js'
import type { RowBinding, RowRead } from './rowScan.js'
import { CodeGroups } from './codeGroups.js'

type Aggregate = 'count' | 'sum' | 'avg' | 'min' | 'max'

interface SummaryFunction {
  name: string
  aggregate: Aggregate
  path: ResolvedPath | null
}

export interface SummaryPlan {
  groupBy: ResolvedPath | null
  functions: SummaryFunction[]
}

export interface SummaryEntry {
  key: string
  summaries: { name: string; value: string | null }[]
}

const FUNCTION = /^(count|sum|avg|min|max)\(\s*([^()]*?)\s*\)$/
const MAX_SUMMARY_FUNCTIONS = 16

export function parseSummary(decl: ResourceDecl, text: string | undefined): SummaryPlan {
  const parts = (text === undefined || text.trim() === '' ? 'count()' : text).split(';').map((part) => part.trim())
  if (parts.length > MAX_SUMMARY_FUNCTIONS + 1) throw wrongParameter(`summary takes at most ${MAX_SUMMARY_FUNCTIONS} functions`)
  let groupBy: ResolvedPath | null = null
  if (parts.length > 1 && !FUNCTION.test(parts[0] as string)) {
    const groupText = parts.shift() as string
    groupBy = resolvePath(decl, groupText.split('/'), groupText, true)
  }
  const functions = parts.map((part): SummaryFunction => {
    const match = FUNCTION.exec(part)
    if (match === null) throw wrongParameter(`summary part '${part}' is not count(), sum(f), avg(f), min(f) or max(f)`)
    const aggregate = match[1] as Aggregate
    const argument = match[2] ?? ''
    if (aggregate === 'count') {
      if (argument !== '') throw wrongParameter('count() takes no argument')
      return { name: part, aggregate, path: null }
    }
    if (argument === '') throw wrongParameter(`${aggregate}() needs a field`)
    const path = resolvePath(decl, argument.split('/'), argument)
    if (!['Long', 'Integer', 'Double', 'Date'].includes(path.field.type)) throw wrongParameter(`${aggregate}(${argument}): '${argument}' is not a number or date`)
    return { name: part, aggregate, path }
  })
  return { groupBy, functions }
}

class Accumulator {
  count = 0
  sum = 0
  min: number | null = null
  max: number | null = null

  add(value: unknown): void {
    if (typeof value !== 'number') return
    this.count += 1
    this.sum += value
    if (this.min === null || value < this.min) this.min = value
    if (this.max === null || value > this.max) this.max = value
  }

  /** Takes in what `other` counted (after what this one did). */
  merge(other: Accumulator): void {
    this.count += other.count
    this.sum += other.sum
    if (other.min !== null && (this.min === null || other.min < this.min)) this.min = other.min
    if (other.max !== null && (this.max === null || other.max > this.max)) this.max = other.max
  }
}

function text(value: number | null): string | null {
  return value === null ? null : String(Math.round(value * 1e6) / 1e6)
}

/** The summary of plain records at once: the reference the column store's summaries are compared with (its property test). */
export function runSummary(plan: SummaryPlan, recs: Iterable<Rec>, context: DisplayContext): SummaryEntry[] {
  return runNow(summarySteps(plan, (visit) => visitAll(recs, visit), context))
}

// biome-ignore lint/correctness/useYield: steps that run at once (the reference summary needs no pause; summarySteps takes steps)
function* visitAll(recs: Iterable<Rec>, visit: (rec: Rec) => void): Steps<void> {
  for (const rec of recs) visit(rec)
}

type Group = { records: number; accumulators: Accumulator[] }

/**
 * The summary as steps: `records(visit)` hands every record to `visit`
 * (pausing as it likes: ListPlan.eachMatching), then the groups are sorted
 * in steps (a grouping by a field of many values makes many groups).
 */
/** @public bench/scanFigures.ts runs it from another build's compiled tree (the build before, for comparison). */
export function* summarySteps(plan: SummaryPlan, records: (visit: (rec: Rec) => void) => Steps<void>, context: DisplayContext): Steps<SummaryEntry[]> {
  const groups = new Map<string, Group>()
  const count = (rec: Rec, raw: unknown): void => {
    const key = raw === null ? 'null' : String(raw)
    let group = groups.get(key)
    if (group === undefined) {
      group = { records: 0, accumulators: plan.functions.map(() => new Accumulator()) }
      groups.set(key, group)
    }
    group.records += 1
    for (const [index, fn] of plan.functions.entries()) if (fn.path !== null) group.accumulators[index]?.add(fn.path.get(rec, context))
  }
  const groupBy = plan.groupBy
  yield* records((rec) => {
    if (groupBy === null) return count(rec, '*')
    const raw = groupBy.get(rec, context)
    if (!groupBy.many) return count(rec, raw)
    const elements = raw as readonly unknown[]
    if (elements.length === 0) return count(rec, null)
    for (const element of new Set(elements)) count(rec, element)
  })
  return yield* entriesSteps(plan, groups)
}

/** The groups as the answer has them: sorted by key (in steps), each function's value as text. */
function* entriesSteps(plan: SummaryPlan, groups: Map<string, Group>): Steps<SummaryEntry[]> {
  if (plan.groupBy === null && groups.size === 0) groups.set('*', { records: 0, accumulators: plan.functions.map(() => new Accumulator()) })
  const sorted = yield* sortInSteps([...groups.entries()], ([a], [b]) => compareCodePoints(a, b))
  return sorted.map(([key, group]) => ({
    key,
    summaries: plan.functions.map((fn, index) => {
      const accumulator = group.accumulators[index] as Accumulator
      const value =
        fn.aggregate === 'count'
          ? String(group.records)
          : fn.aggregate === 'sum'
            ? text(accumulator.sum)
            : fn.aggregate === 'avg'
              ? text(accumulator.count === 0 ? null : accumulator.sum / accumulator.count)
              : text(fn.aggregate === 'min' ? accumulator.min : accumulator.max)
      return { name: fn.name, value }
    }),
  }))
}

/**
 * summarySteps over rows (ListPlan.eachMatchingBlock, a block of rows at a
 * time), reading their columns (rowScan.ts) instead of records. Grouped by
 * nothing or by a text or reference kept as it is (`user/id`), over number
 * fields kept as they are, the groups are pool codes counted in typed
 * arrays (codeGroups.ts). Otherwise row by row: grouped by such a column,
 * a row's group is still found by its pool code, an integer; the codes are
 * turned into their texts once at the end. The answer is summarySteps'
 * over the same records.
 */
export function* summaryOfBlocksSteps(
  plan: SummaryPlan,
  blocks: (visit: (rows: Int32Array, count: number, binding: RowBinding) => void) => Steps<void>,
  context: DisplayContext,
): Steps<SummaryEntry[]> {
  const byCode = new Map<number, Group>()
  const byText = new Map<string, Group>()
  const newGroup = (): Group => ({ records: 0, accumulators: plan.functions.map(() => new Accumulator()) })
  let bound: RowBinding | null = null
  let readers: (RowRead | null)[] = []
  let groupColumn: CodeColumn | null = null
  let groupRead: RowRead | null = null
  let codeGroups: CodeGroups | null = null
  const count = (group: Group, row: number): void => {
    group.records += 1
    for (let at = 0; at < readers.length; at += 1) {
      const read = readers[at]
      if (read !== null && read !== undefined) group.accumulators[at]?.add(read(row, context))
    }
  }
  const byKey = (raw: unknown): Group => {
    const key = raw === null ? 'null' : String(raw)
    let group = byText.get(key)
    if (group === undefined) {
      group = newGroup()
      byText.set(key, group)
    }
    return group
  }
  const groupBy = plan.groupBy
  const countRow = (row: number) => {
    if (groupBy === null) return count(byKey('*'), row)
    const column = groupColumn
    if (column !== null && (column.misfits === null || !column.misfits.has(row))) {
      const code = column.code(row)
      let group = byCode.get(code)
      if (group === undefined) {
        group = newGroup()
        byCode.set(code, group)
      }
      return count(group, row)
    }
    const raw = (groupRead as RowRead)(row, context)
    if (!groupBy.many) return count(byKey(raw), row)
    const elements = raw as readonly unknown[]
    if (elements.length === 0) return count(byKey(null), row)
    for (const element of new Set(elements)) count(byKey(element), row)
  }
  yield* blocks((rows, rowCount, binding) => {
    if (bound !== binding) {
      bound = binding
      readers = plan.functions.map((fn) => (fn.path === null ? null : binding.reader(fn.path)))
      const column = groupBy === null ? undefined : binding.columnOf(groupBy)
      groupColumn = column instanceof CodeColumn && groupBy !== null && !groupBy.many ? column : null
      groupRead = groupBy === null ? null : binding.reader(groupBy)
      codeGroups =
        groupBy !== null && groupColumn === null
          ? null
          : CodeGroups.of(
              groupColumn,
              plan.functions.map((fn) => (fn.path === null ? null : (binding.columnOf(fn.path) ?? undefined))),
              rows.length,
            )
    }
    if (codeGroups !== null) codeGroups.add(rows, rowCount)
    else for (let at = 0; at < rowCount; at += 1) countRow(rows[at] as number)
  })
  const groups = new Map<string, Group>()
  const merge = (key: string, group: Group): void => {
    const held = groups.get(key)
    if (held === undefined) groups.set(key, group)
    else {
      held.records += group.records
      held.accumulators.forEach((accumulator, at) => {
        accumulator.merge(group.accumulators[at] as Accumulator)
      })
    }
  }
  const codeColumn = groupColumn as CodeColumn | null
  const keyOf = (code: number): string => (groupBy === null ? '*' : code === 0 ? 'null' : String(codeColumn?.pool.text(code)))
  for (const group of (codeGroups as CodeGroups | null)?.groups() ?? []) {
    merge(keyOf(group.code), {
      records: group.records,
      accumulators: group.figures.map((figures) => Object.assign(new Accumulator(), figures)),
    })
  }
  for (const [code, group] of byCode) merge(keyOf(code), group)
  for (const [key, group] of byText) merge(key, group)
  return yield* entriesSteps(plan, groups)
}
