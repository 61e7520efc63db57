/*
 * `$dummy`: a complete sample object with random values that satisfy the
 * declaration's constraints (sizes, enums, patterns we know, e-mail), with
 * references as stubs of random ids.
 */
import crypto from 'node:crypto'
import type { FieldDecl, ResourceDecl } from './schema.js'
import type { OutObject } from './render.js'
import { OutDate } from './values.js'

const WORDS = ['alpha', 'delta', 'orbit', 'harbor', 'maple', 'quartz', 'signal', 'tundra', 'velvet', 'zenith']

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
    if (constraint.type === 'Pattern') text = randomWord()
    if (constraint.type === 'Size') text = text.slice(0, constraint.max).padEnd(constraint.min, 'X')
  }
  return text
}

function dummyNumber(fieldDecl: FieldDecl, integer: boolean): number {
  let low = 0
  let high = 1000
  for (const constraint of fieldDecl.constraints) {
    if (constraint.type === 'Min') low = constraint.value
    if (constraint.type === 'Max') high = constraint.value
  }
  const value = low + Math.random() * (high - low)
  return integer ? Math.floor(value) : Math.round(value * 100) / 100
}

export function dummyOf(decl: ResourceDecl): OutObject {
  const out: OutObject = {}
  for (const fieldDecl of decl.fields) {
    if (fieldDecl.access === 'WRITE_ONLY' || fieldDecl.access === 'INTERNAL') continue
    if (fieldDecl.ref !== undefined) {
      out[fieldDecl.name] = fieldDecl.name === 'trashItem' ? null : { id: crypto.randomUUID(), version: 1, displayName: randomWord() }
      continue
    }
    switch (fieldDecl.type) {
      case 'String':
        out[fieldDecl.name] = dummyString(fieldDecl)
        break
      case 'Boolean':
        out[fieldDecl.name] = randomInt(2) === 1
        break
      case 'Long':
      case 'Integer':
        out[fieldDecl.name] = dummyNumber(fieldDecl, true)
        break
      case 'Double':
        out[fieldDecl.name] = dummyNumber(fieldDecl, false)
        break
      case 'Date':
        out[fieldDecl.name] = new OutDate(Date.now() - randomInt(365 * 24 * 3600) * 1000)
        break
    }
  }
  out.version = 1
  return out
}
