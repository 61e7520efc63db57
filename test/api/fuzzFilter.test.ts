/*
 * Grammar-aware fuzzing of `$filter` and `$orderby`.
 *
 * Inputs: random trees from the grammar of grammar/filter.ohm (typed
 * comparisons over the resource's real fields and reference paths, every
 * function with right and wrong arities, arithmetic including division by
 * zero, prefix chains, deep nesting, dates valid and not), random mutations
 * of those and of the conformance corpus (test/fixtures/filter-conformance/), and `$orderby` lists with
 * mutations. In process, for speed, every input must either compile and
 * evaluate against the tenant's real records (and sort them) without
 * throwing, or be refused with a 4xx ApiError (TL01-1105, or TL01-9002 for
 * the length and nesting limits): anything else thrown is a bug. A slice
 * goes over HTTP too (when its query fits in a request head that uWebSockets.js
 * accepts): never a 5xx, every error in the body of ARCHITECTURE.md §4.
 * FUZZ_INPUTS / FUZZ_SEED: see helpers/fuzz.ts.
 */
import { readFileSync } from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { ApiError } from '../../src/domain/errors.js'
import { RESOURCES } from '../../src/domain/resources/index.js'
import type { ResourceDecl } from '../../src/domain/schema.js'
import { compileFilter } from '../../src/query/filterCompiler.js'
import { parseOrderBy, recordComparator } from '../../src/query/orderBy.js'
import { api, ref } from '../helpers/api.js'
import { expectWithSeed, fuzzInputs, fuzzSeed, isErrorBody, mutateMany, Random } from '../helpers/fuzz.js'
import { REPO_ROOT, startInProcess } from '../helpers/server.js'

const INPUTS = fuzzInputs(4000)
const HTTP_EVERY = 25
/** uWebSockets.js closes a connection whose request head passes about 128 KB, before the service sees it (README, Reliability). */
const MAX_HTTP_QUERY_CHARS = 64 * 1024
const seed = fuzzSeed()
const random = new Random(seed)
t.comment(`fuzz seed ${seed} (FUZZ_SEED=${seed} repeats this run), ${INPUTS} inputs`)

const server = await startInProcess(undefined, { RATE_LIMIT_REQUESTS: '0' })
t.teardown(() => server.stop())
const owner = await server.client.createTenant('fz')
const a = api(server.client, 'fz', owner.token)
const me = (await a.get('users/@self')).json.id as string
const customer = await a.create('time/clients', { name: "Cli'ent" })
const workType = await a.create('time/worktypes', { name: 'Dev' })
const projects = [
  await a.create('time/projects', { name: 'Alpha', code: 'A', note: 'x'.repeat(300), timeBudget: 3_600_000, priceBudget: 12.5, client: ref(customer), begins: '2024-01-10T00:00:00Z' }),
  await a.create('time/projects', { name: 'beta', active: false, timeBudget: 0 }),
  await a.create('time/projects', { name: 'é😀', priceBudget: -1 }),
]
const task = await a.create('time/tasks', { name: 'T1', project: ref(projects[0] as string) })
for (const [index, project] of projects.entries()) {
  await a.create('time/timerecords', {
    user: ref(me),
    project: ref(project),
    task: index === 0 ? ref(task) : null,
    workType: ref(workType),
    duration: index * 1000,
    start: `2024-0${index + 1}-15T10:00:00Z`,
    description: index === 1 ? null : 'work',
  })
}
await a.create('users', { firstName: 'Zed', lastName: "O'Hara", email: 'zed@fz.test', password: 'zed-password' })

const actor = server.service.services.registry.get('fz')
if (actor === undefined) throw new Error('no tenant')
const state = actor.state
const DECLS = RESOURCES.filter((decl) => decl.path !== null && !decl.internal)

const corpus = readFileSync(path.join(REPO_ROOT, 'test', 'fixtures', 'filter-conformance', 'filter-cases.jsonl'), 'utf8')
  .split('\n')
  .filter((line) => line.trim() !== '')
  .map((line) => (JSON.parse(line) as { input: string }).input)

const TOKENS = ['and', 'or', 'not', 'eq', 'ne', 'lt', 'le', 'gt', 'ge', 'add', 'sub', 'mul', 'div', 'mod', '(', ')', ',', "'", 'null', 'true', "datetime'", 'substringof(', 'length(', '/', 'id', '-']

// ---------------------------------------------------------------------------
// Random trees from the grammar

const FUNCTIONS: Record<string, number[]> = {
  substring: [2, 3],
  substringof: [2],
  startswith: [2],
  endswith: [2],
  length: [1],
  indexof: [2],
  tolower: [1],
  toupper: [1],
  concat: [2],
}

function stringLiteral(): string {
  const pieces = ['', 'a', 'Alpha', "O''Neil", 'é😀', ' ', '%', '\\', 'x'.repeat(random.int(300))]
  return `'${random.pick(pieces)}${random.chance(0.1) ? random.pick(pieces) : ''}'`
}

function numberLiteral(): string {
  return random.pick(['0', '1', '-1', '3600000', '12.5', '-0.5', '9007199254740993', `1${'0'.repeat(400)}`, '00012', String(random.int(1e6))])
}

function datetimeLiteral(): string {
  const d2 = (usual: number) => String(random.chance(0.9) ? 1 + random.int(usual) : random.int(100)).padStart(2, '0')
  const seconds = random.chance(0.5) ? `:${d2(59)}${random.chance(0.3) ? `.${random.int(1e7)}` : ''}` : ''
  const year = random.chance(0.9) ? 2000 + random.int(40) : random.int(10000)
  return `datetime'${year}-${d2(12)}-${d2(28)}T${d2(23)}:${d2(59)}${seconds}${random.chance(0.5) ? 'Z' : ''}'`
}

function literal(): string {
  switch (random.int(5)) {
    case 0:
      return stringLiteral()
    case 1:
      return numberLiteral()
    case 2:
      return datetimeLiteral()
    case 3:
      return random.pick(['true', 'false'])
    default:
      return 'null'
  }
}

/** A property path: a field, a reference's field (one or two steps), or a name that is not there. */
function member(decl: ResourceDecl, depth = 0): { text: string; type: string } {
  const readable = decl.fields.filter((candidate) => candidate.access !== 'WRITE_ONLY')
  const fieldDecl = random.pick(random.chance(0.95) && readable.length > 0 ? readable : decl.fields)
  if (random.chance(0.05)) return { text: random.pick(['nosuchfield', 'id/id', 'name/x', '_x', 'trashItem/id', 'a/b/c/d/e/f']), type: 'any' }
  if (fieldDecl.ref !== undefined && depth < 2 && random.chance(0.7)) {
    const target = RESOURCES.find((candidate) => candidate.type === fieldDecl.ref)
    if (target !== undefined) {
      const inner = random.chance(0.5) ? { text: 'id', type: 'String' } : member(target, depth + 1)
      return { text: `${fieldDecl.name}/${inner.text}`, type: inner.type }
    }
  }
  return { text: fieldDecl.name, type: fieldDecl.ref === undefined ? fieldDecl.type : 'ref' }
}

function valueFor(type: string): string {
  if (random.chance(0.15)) return literal()
  switch (type) {
    case 'String':
      return stringLiteral()
    case 'Long':
    case 'Integer':
    case 'Double':
      return numberLiteral()
    case 'Date':
      return datetimeLiteral()
    case 'Boolean':
      return random.pick(['true', 'false'])
    default:
      return random.chance(0.5) ? 'null' : stringLiteral()
  }
}

function call(decl: ResourceDecl, depth: number): string {
  const name = random.pick(Object.keys(FUNCTIONS))
  const arities = FUNCTIONS[name] as number[]
  const arity = random.chance(0.9) ? random.pick(arities) : random.int(5)
  const args = Array.from({ length: arity }, () => (random.chance(0.6) ? member(decl).text : anyExpr(decl, depth + 1)))
  return `${name}(${args.join(random.pick([',', ', ', ' ,']))})`
}

/** A comparison that type-checks (mostly): the common shape of real filters. */
function comparison(decl: ResourceDecl): string {
  const target = member(decl)
  const op = random.pick(['eq', 'ne', 'lt', 'le', 'gt', 'ge'])
  switch (target.type) {
    case 'String':
      return random.pick([
        `${target.text} ${op} ${valueFor('String')}`,
        `startswith(${target.text}, ${stringLiteral()})`,
        `endswith(${target.text}, ${stringLiteral()})`,
        `substringof(${stringLiteral()}, ${target.text})`,
        `length(${target.text}) ${op} ${numberLiteral()}`,
        `indexof(${target.text}, ${stringLiteral()}) ${op} ${numberLiteral()}`,
        `tolower(${target.text}) ${op} toupper(${stringLiteral()})`,
        `concat(${target.text}, ${stringLiteral()}) ${op} ${stringLiteral()}`,
        `substring(${target.text}, ${numberLiteral()}) ${op} ${stringLiteral()}`,
        `substring(${target.text}, ${numberLiteral()}, ${numberLiteral()}) ${op} ${stringLiteral()}`,
      ])
    case 'Long':
    case 'Integer':
    case 'Double':
      return `${target.text} ${random.pick(['add', 'sub', 'mul', 'div', 'mod'])} ${numberLiteral()} ${op} ${random.chance(0.3) ? `- ${target.text}` : numberLiteral()}`
    default:
      return `${target.text} ${op} ${valueFor(target.type)}`
  }
}

function boolExpr(decl: ResourceDecl, depth: number): string {
  if (depth > 6) return comparison(decl)
  switch (random.int(7)) {
    case 0:
      return `${boolExpr(decl, depth + 1)} ${random.pick(['and', 'or'])} ${boolExpr(decl, depth + 1)}`
    case 1:
      return `not ${random.chance(0.5) ? `(${boolExpr(decl, depth + 1)})` : comparison(decl)}`
    case 2:
      return `(${boolExpr(decl, depth + 1)})`
    case 3:
      return random.chance(0.5) ? `${anyExpr(decl, depth + 1)} ${random.pick(['eq', 'ne', 'lt', 'gt'])} ${anyExpr(decl, depth + 1)}` : call(decl, depth)
    default:
      return comparison(decl)
  }
}

/** Anything the grammar produces, typed or not. */
function anyExpr(decl: ResourceDecl, depth: number): string {
  if (depth > 5) return random.chance(0.5) ? literal() : member(decl).text
  switch (random.int(8)) {
    case 0:
      return `${anyExpr(decl, depth + 1)} ${random.pick(['or', 'and', 'eq', 'ne', 'lt', 'le', 'gt', 'ge', 'add', 'sub', 'mul', 'div', 'mod'])} ${anyExpr(decl, depth + 1)}`
    case 1:
      return `${random.pick(['not ', '- ', '-'])}${anyExpr(decl, depth + 1)}`
    case 2:
      return `(${anyExpr(decl, depth + 1)})`
    case 3:
      return call(decl, depth)
    case 4:
      return literal()
    default:
      return member(decl).text
  }
}

/** Chains and nesting near and past the limits (4096 characters, 64 levels). */
function extreme(decl: ResourceDecl): string {
  const count = random.pick([10, 63, 64, 65, 200, 2000])
  switch (random.int(4)) {
    case 0:
      return `${'('.repeat(count)}${comparison(decl)}${')'.repeat(count)}`
    case 1:
      return `${'not '.repeat(count)}${comparison(decl)}`
    case 2:
      return Array.from({ length: count }, () => comparison(decl)).join(random.pick([' or ', ' and ']))
    default:
      return `${'length('.repeat(Math.min(count, 100))}name${')'.repeat(Math.min(count, 100))} gt 0`
  }
}

function filterInput(decl: ResourceDecl): string {
  const roll = random.next()
  if (roll < 0.4) return boolExpr(decl, 0)
  if (roll < 0.55) return anyExpr(decl, 0)
  if (roll < 0.6) return extreme(decl)
  if (roll < 0.8) return mutateMany(random, boolExpr(decl, 0), TOKENS)
  return mutateMany(random, random.pick(corpus), TOKENS)
}

function orderByInput(decl: ResourceDecl): string {
  const parts = Array.from({ length: 1 + random.int(random.chance(0.05) ? 12 : 3) }, () => {
    const direction = random.pick(['', ' asc', ' desc', ' ASC', ' up', '  desc'])
    return `${random.chance(0.1) ? ' ' : ''}${member(decl).text}${direction}`
  })
  const text = parts.join(random.pick([',', ', ', ' ,']))
  return random.chance(0.3) ? mutateMany(random, text, ['asc', 'desc', ',', '/', 'id']) : text
}

// ---------------------------------------------------------------------------
// The checks

function refusedProperly(error: unknown): boolean {
  return error instanceof ApiError && (error.code === 'TL01-1105' || error.code === 'TL01-9002') && error.message.length > 0
}

t.test('$filter and $orderby: evaluate or refuse with a 4xx, never anything else', async (t) => {
  let compiled = 0
  let refused = 0
  let overHttp = 0
  let failures = 0
  for (let index = 0; index < INPUTS && failures < 5; index += 1) {
    const decl = random.pick(DECLS)
    const isFilter = random.chance(0.8)
    const input = isFilter ? filterInput(decl) : orderByInput(decl)
    const records = [...state.collection(decl.type).values()]
    try {
      if (isFilter) {
        const filter = compileFilter(decl, input)
        for (const rec of records) filter.test(rec, state)
      } else {
        const keys = parseOrderBy(decl, input)
        records.sort(recordComparator(keys, state))
      }
      compiled += 1
    } catch (error) {
      if (!expectWithSeed(t, refusedProperly(error), seed, `${decl.type} ${isFilter ? '$filter' : '$orderby'} threw ${String(error)}`, input)) failures += 1
      refused += 1
    }
    if (index % HTTP_EVERY === 0 && decl.path !== null && Buffer.byteLength(input) * 3 <= MAX_HTTP_QUERY_CHARS) {
      overHttp += 1
      let fine: boolean
      let answered: string
      try {
        const response = await a.get(decl.path, { [isFilter ? '$filter' : '$orderby']: input, $top: 5 })
        fine = response.status === 200 || (response.status >= 400 && response.status < 500 && isErrorBody(response.json, response.status))
        answered = `${response.status} ${response.text.slice(0, 200)}`
      } catch (error) {
        fine = false
        answered = `nothing: ${String(error)}`
      }
      if (!expectWithSeed(t, fine, seed, `GET ${decl.path} answered ${answered}`, input)) failures += 1
    }
  }
  t.equal(failures, 0, `${compiled + refused} inputs: ${compiled} evaluated, ${refused} refused with 4xx, ${overHttp} also over HTTP`)
  t.ok(compiled > INPUTS / 10 && refused > INPUTS / 10, 'the generator reaches both outcomes')
  t.equal((await a.get('time/projects/$count')).status, 200, 'the server is alive')
  console.log(`FUZZ_FIGURES filter inputs=${compiled + refused} evaluated=${compiled} refused=${refused} http=${overHttp} failures=${failures}`)
})
