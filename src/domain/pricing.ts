/*
 * Time record pricing (interface.md, "Time record pricing"). A price list
 * ties an hourly price to a combination of user, work type, client, project
 * and task; which of them are set gives its priority level (1–18). For a
 * time record every live price list whose set dimensions all equal the
 * record's applies, and the one with the highest level wins (ties: the
 * newest list, then the higher id, so the choice is deterministic). The
 * record's client is its own, else its project's.
 *
 * price = hourly price × duration / 1 h, rounded to 2 decimals half away
 * from zero. A record is billable only when `billable` is true (unset is
 * not billable, as in the reports' billableTime): any other record gets no
 * price. A record whose price was set by hand (priceModified, or
 * priceAutoCalculation false) keeps it.
 *
 * A price list whose combination is not one of the 18 levels would never
 * apply, so it is refused when created or changed (checkPriceListLevel).
 *
 * `$findpricelist` asks which list applies to a combination given by
 * itself (no time record): the same choice, with the project taken from the
 * task when only the task is named. A record is unbilled (`$unbilled`) when
 * it is billable and not billed yet.
 */
import { violation } from './errors.js'
import type { DisplayContext, Rec } from './schema.js'

const HOUR_MS = 3_600_000

export type Dimension = 'task' | 'project' | 'client' | 'user' | 'workType'
export const DIMENSIONS: readonly Dimension[] = ['task', 'project', 'client', 'user', 'workType']

/** Priority level by the set of dimensions a price list names (sorted, joined by '+'). */
const PRICE_LEVELS: ReadonlyMap<string, number> = new Map([
  ['', 1],
  ['workType', 2],
  ['user', 3],
  ['user+workType', 4],
  ['client', 5],
  ['client+workType', 6],
  ['client+user', 7],
  ['client+user+workType', 8],
  ['project', 9],
  ['client+project', 10],
  ['project+workType', 11],
  ['project+user', 12],
  ['project+user+workType', 13],
  ['task', 14],
  ['project+task', 15],
  ['project+task+workType', 16],
  ['project+task+user', 17],
  // interface.md words 18 like 16; we read it as the full combination.
  ['project+task+user+workType', 18],
])

function dimensionsOf(priceList: Rec): Dimension[] {
  return DIMENSIONS.filter((dimension) => typeof priceList[dimension] === 'string')
}

/** The priority level of a price list, or undefined for a combination the table does not list. */
function priceLevel(priceList: Rec): number | undefined {
  return PRICE_LEVELS.get(dimensionsOf(priceList).sort().join('+'))
}

/** The combinations of the 18 levels in words, lowest level first ("none", "workType", …, "project + task + user + workType"). */
const ALLOWED_COMBINATIONS: readonly string[] = [...PRICE_LEVELS.keys()].map((key) => (key === '' ? 'none' : key.split('+').join(' + ')))

/** 412 TL01-1104 for a price list whose set dimensions are not one of the 18 levels. */
export function checkPriceListLevel(priceList: Rec): void {
  if (priceLevel(priceList) !== undefined) return
  const dimensions = dimensionsOf(priceList)
  throw violation([
    {
      entityType: 'TimePriceList',
      field: dimensions[0] ?? 'price',
      constraint: 'PriceLevel',
      message: `TimePriceList for ${dimensions.join(' + ')} is no priority level; allowed combinations: ${ALLOWED_COMBINATIONS.join('; ')}`,
    },
  ])
}

/** Whether a change of a price list changed which dimensions it names. */
export function dimensionsChanged(before: Rec, after: Rec): boolean {
  return DIMENSIONS.some((dimension) => (typeof before[dimension] === 'string') !== (typeof after[dimension] === 'string'))
}

export function roundMoney(value: number): number {
  const cents = Math.round(Math.abs(value) * 100 + 1e-9)
  return (Math.sign(value) * cents) / 100
}

export function durationOf(record: Rec): number | null {
  if (typeof record.duration === 'number') return record.duration
  if (typeof record.start === 'number' && typeof record.stop === 'number') return Math.max(0, record.stop - record.start)
  return null
}

/** The price list that applies to a time record, if any. */
function applicablePriceList(record: Rec, priceLists: Iterable<Rec>, context: DisplayContext): Rec | undefined {
  const project = typeof record.project === 'string' ? context.get('Project', record.project) : undefined
  const values: Record<Dimension, unknown> = {
    task: record.task,
    project: record.project,
    client: record.client ?? project?.client ?? null,
    user: record.user,
    workType: record.workType,
  }
  let best: { list: Rec; level: number } | undefined
  for (const list of priceLists) {
    if (list.trashItem !== null || typeof list.price !== 'number') continue
    const level = priceLevel(list)
    if (level === undefined) continue
    if (!dimensionsOf(list).every((dimension) => list[dimension] === values[dimension])) continue
    const better = best === undefined || level > best.level || (level === best.level && (list.createdAt > best.list.createdAt || (list.createdAt === best.list.createdAt && list.id > best.list.id)))
    if (better) best = { list, level }
  }
  return best?.list
}

/** The price list that applies to a combination of ids (a missing dimension: none); the project is the task's when not named. */
export function priceListFor(combination: Partial<Record<Dimension, string | null>>, priceLists: Iterable<Rec>, context: DisplayContext): Rec | undefined {
  const task = typeof combination.task === 'string' ? context.get('Task', combination.task) : undefined
  const project = combination.project ?? (typeof task?.project === 'string' ? task.project : null)
  const record = { task: combination.task ?? null, project, client: combination.client ?? null, user: combination.user ?? null, workType: combination.workType ?? null } as unknown as Rec
  return applicablePriceList(record, priceLists, context)
}

/** A time record or an expense that will be billed and was not billed yet. */
export function isUnbilled(record: Rec): boolean {
  return record.billable === true && record.billed !== true
}

export interface CalculatedPrice {
  price: number | null
  unitPrice: number | null
}

export function calculatePrice(record: Rec, priceLists: Iterable<Rec>, context: DisplayContext): CalculatedPrice {
  if (record.billable !== true) return { price: null, unitPrice: null }
  const list = applicablePriceList(record, priceLists, context)
  const duration = durationOf(record)
  if (list === undefined || duration === null) return { price: null, unitPrice: null }
  const unitPrice = list.price as number
  return { price: roundMoney((unitPrice * duration) / HOUR_MS), unitPrice }
}

/** The fields a write with calculate_price sets on a time record. */
export function priceFields(record: Rec, priceLists: Iterable<Rec>, context: DisplayContext): Partial<CalculatedPrice> {
  if (record.priceModified === true || record.priceAutoCalculation === false) return {}
  return calculatePrice(record, priceLists, context)
}
