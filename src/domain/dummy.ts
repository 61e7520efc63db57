/*
 * `$dummy`: a complete sample object with random values that satisfy the
 * declaration's constraints (sizes, enums, patterns we know or that declare
 * an example, e-mail),
 * shown as a GET without `no_expand` shows a stored one. The sample is
 * made of sample records: the object, one sample of every object it
 * refers to, and one of every object those refer to (DUMMY_DEPTH levels
 * below the object; deeper references are empty). They form a display
 * context of their own, and the object is rendered by the renderer a GET
 * uses (render.ts): references embedded in full (their own references as
 * stubs), every displayName by its resource's display rule applied to the
 * sample's own fields (a time record's is its sample user's name), derived
 * fields from the sample, `append` counters as random counts; a list of
 * references holds one sample.
 */
import crypto from 'node:crypto'
import type { DisplayContext, FieldDecl, Rec, ResourceDecl } from './schema.js'
import { renderRecord, type OutObject } from './render.js'
import { resourceByType } from './resources/index.js'

const WORDS = ['alpha', 'delta', 'orbit', 'harbor', 'maple', 'quartz', 'signal', 'tundra', 'velvet', 'zenith']

/** Levels of sample records below the object: 1 for what it embeds, 2 for the stubs inside those. */
const DUMMY_DEPTH = 2
const YEAR_S = 365 * 24 * 3600
/** Upper bound of a sample number without a Max constraint (and of a sample counter). */
const SAMPLE_NUMBER_MAX = 1000

function randomInt(maxExclusive: number): number {
  return crypto.randomInt(maxExclusive)
}

function randomWord(): string {
  return WORDS[randomInt(WORDS.length)] ?? 'alpha'
}

function dummyString(fieldDecl: FieldDecl): string {
  let text = `${randomWord()} ${randomWord()}`
  for (const constraint of fieldDecl.constraints) {
    if (constraint.type === 'Enum') return constraint.values[randomInt(constraint.values.length)] ?? ''
    if (constraint.type === 'TimeZone') return 'Europe/Berlin'
    if (constraint.type === 'Email') return `${randomWord()}.${randomInt(1000)}@example.com`
    if (constraint.type === 'Pattern' && constraint.regexp === '[A-Z]+') text = randomWord().toUpperCase()
    if (constraint.type === 'Pattern' && fieldDecl.name === 'id') return crypto.randomUUID()
    if (constraint.type === 'Pattern' && constraint.example !== undefined) return constraint.example
    if (constraint.type === 'Pattern') text = randomWord()
    if (constraint.type === 'Size') text = text.slice(0, constraint.max).padEnd(constraint.min, 'X')
  }
  return text
}

function dummyNumber(fieldDecl: FieldDecl, integer: boolean): number {
  let low = 0
  let high = SAMPLE_NUMBER_MAX
  for (const constraint of fieldDecl.constraints) {
    if (constraint.type === 'Min') low = constraint.value
    if (constraint.type === 'Max') high = constraint.value
  }
  const value = low + Math.random() * (high - low)
  return integer ? Math.floor(value) : Math.round(value * 100) / 100
}

/** Sample records by type and id: the display context the sample object is rendered in. */
class SamplePool implements DisplayContext {
  private readonly records = new Map<string, Rec>()

  add(type: string, rec: Rec): void {
    this.records.set(`${type}:${rec.id}`, rec)
  }

  get(type: string, id: string): Rec | undefined {
    return this.records.get(`${type}:${id}`)
  }

  displayNameOf(type: string, id: unknown): string {
    const rec = typeof id === 'string' ? this.get(type, id) : undefined
    return rec === undefined ? '' : resourceByType(type).displayName(rec, this)
  }
}

/** A sample value of a stored scalar field (undefined: the field is left out). */
function sampleValue(fieldDecl: FieldDecl): unknown {
  switch (fieldDecl.type) {
    case 'String':
      return dummyString(fieldDecl)
    case 'Boolean':
      return randomInt(2) === 1
    case 'Long':
    case 'Integer':
      return dummyNumber(fieldDecl, true)
    case 'Double':
      return dummyNumber(fieldDecl, false)
    case 'Date':
      return Date.now() - randomInt(YEAR_S) * 1000
    default:
      return undefined
  }
}

/** A sample record of `decl` in the pool, with samples of what it refers to down to DUMMY_DEPTH levels. */
function sampleRecord(decl: ResourceDecl, pool: SamplePool, depth: number): Rec {
  const now = Date.now()
  const rec: Rec = { id: crypto.randomUUID(), version: 1, createdAt: now - randomInt(YEAR_S) * 1000, updatedAt: now, trashItem: null }
  for (const fieldDecl of decl.fields) {
    if (fieldDecl.name in rec || fieldDecl.computed || fieldDecl.access === 'INTERNAL') continue
    if (fieldDecl.ref !== undefined) {
      const sampled = depth < DUMMY_DEPTH ? sampleRecord(resourceByType(fieldDecl.ref), pool, depth + 1).id : null
      rec[fieldDecl.name] = fieldDecl.list === true ? (sampled === null ? [] : [sampled]) : sampled
      continue
    }
    rec[fieldDecl.name] = sampleValue(fieldDecl)
  }
  pool.add(decl.type, rec)
  return rec
}

/** Random values of the `append` counters a resource offers. */
function sampleCounters(decl: ResourceDecl): Record<string, number> {
  const counters: Record<string, number> = {}
  for (const counter of decl.appends) counters[counter.field] = randomInt(SAMPLE_NUMBER_MAX)
  return counters
}

export function dummyOf(decl: ResourceDecl): OutObject {
  const pool = new SamplePool()
  const rec = sampleRecord(decl, pool, 0)
  return renderRecord(decl, rec, pool, { noExpand: false, counters: () => sampleCounters(decl) })
}
