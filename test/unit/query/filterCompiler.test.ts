/*
 * Tests the `$filter` compiler against the real declarations: a handful of
 * in-memory projects, users and clients behind a fake DisplayContext, and
 * for each filter the ids of the projects that pass. Then the compile
 * errors (each a 400 naming a position, or 412 for limits) and the index
 * pins and date bounds the planner reads.
 */
import t, { type Test } from 'tap'
import { ApiError } from '../../../src/domain/errors.js'
import { resourceByType } from '../../../src/domain/resources/index.js'
import type { DisplayContext, Rec } from '../../../src/domain/schema.js'
import { compileFilter } from '../../../src/query/filterCompiler.js'

const Project = resourceByType('Project')
const User = resourceByType('User')
const Client = resourceByType('Client')

const JAN_10 = Date.UTC(2024, 0, 10)
const JUN_30 = Date.UTC(2024, 5, 30, 12)
const MAR_01 = Date.UTC(2024, 2, 1)

function rec(id: string, fields: Record<string, unknown>): Rec {
  return { id, version: 1, createdAt: JAN_10, updatedAt: JAN_10, trashItem: null, ...fields }
}

const users = [rec('u1', { firstName: 'Ann', lastName: 'Lee', email: 'ann@example.com', active: true }), rec('u2', { firstName: 'Bob', lastName: 'Ray', email: 'bob@example.com', active: false })]
const clients = [rec('c1', { name: 'Acme' })]
const projects = [
  rec('p1', { name: 'Alpha', code: 'A1', active: true, personal: false, begins: JAN_10, ends: JUN_30, timeBudget: 3_600_000, priceBudget: 1500.5, owner: 'u1', client: 'c1' }),
  rec('p2', { name: 'beta', active: false, personal: true, begins: MAR_01, timeBudget: 0, owner: 'u2', client: null }),
  rec('p3', { name: "O'Neil", code: 'ON', timeBudget: -5, priceBudget: 2, owner: 'u9' }),
]

const store = new Map<string, Rec>()
for (const [type, list] of [
  ['User', users],
  ['Client', clients],
  ['Project', projects],
] as const) {
  for (const item of list) store.set(`${type}/${item.id}`, item)
}

const context: DisplayContext = {
  get: (type, id) => store.get(`${type}/${id}`),
  displayNameOf: (type, id) => {
    const target = typeof id === 'string' ? store.get(`${type}/${id}`) : undefined
    return target === undefined ? '' : resourceByType(type).displayName(target, context)
  },
}

/** Ids of the projects that pass the filter. */
function matching(text: string): string[] {
  const filter = compileFilter(Project, text)
  return projects.filter((item) => filter.test(item, context)).map((item) => item.id)
}

function compileError(text: string, decl = Project): ApiError | undefined {
  try {
    compileFilter(decl, text)
  } catch (err) {
    if (err instanceof ApiError) return err
    throw err
  }
  return undefined
}

function check(t: Test, cases: ReadonlyArray<readonly [string, readonly string[]]>): void {
  for (const [text, expected] of cases) t.same(matching(text), expected, text)
}

t.test('comparison operators', async (t) => {
  check(t, [
    ["name eq 'Alpha'", ['p1']],
    ["name ne 'Alpha'", ['p2', 'p3']],
    ["'Alpha' eq name", ['p1']],
    ["name eq 'alpha'", []],
    ['timeBudget gt 0', ['p1']],
    ['timeBudget ge 0', ['p1', 'p2']],
    ['timeBudget lt 0', ['p3']],
    ['timeBudget le 0', ['p2', 'p3']],
    ['0 lt timeBudget', ['p1']],
    ['priceBudget gt 1500', ['p1']],
    ['priceBudget eq 1500.5', ['p1']],
    ['timeBudget eq -5', ['p3']],
    ["name lt 'b'", ['p1', 'p3']], // by code point: 'A' < 'O' < 'b'
    ["name gt 'Z'", ['p2']],
    ["name ge 'beta'", ['p2']],
    ["name le 'Alpha'", ['p1']],
    ['active eq true', ['p1']],
    ['active eq false', ['p2']],
    ['active ne true', ['p2', 'p3']],
    ['active lt true', ['p2']], // false < true; null is never ordered
    ['active gt false', ['p1']],
    ['priceBudget eq timeBudget', []],
    ['timeBudget gt priceBudget', ['p1']],
  ])
})

t.test('null: missing values, eq/ne null and ordering', async (t) => {
  check(t, [
    ['code eq null', ['p2']],
    ['code ne null', ['p1', 'p3']],
    ['null eq code', ['p2']],
    ['active eq null', ['p3']],
    ['priceBudget eq null', ['p2']],
    ['ends eq null', ['p2', 'p3']],
    ['client eq null', ['p2', 'p3']],
    ['client ne null', ['p1']],
    ['priceBudget lt null', []],
    ['priceBudget ge null', []],
    ['null le null', []],
    ['null eq null', ['p1', 'p2', 'p3']],
    ["code ne 'A1'", ['p2', 'p3']],
    ['priceBudget lt 10', ['p3']],
  ])
})

t.test('and, or, not and bare booleans', async (t) => {
  check(t, [
    ["active eq true and name eq 'Alpha'", ['p1']],
    ["active eq true and name eq 'beta'", []],
    ["active eq true or name eq 'beta'", ['p1', 'p2']],
    ["not (name eq 'beta')", ['p1', 'p3']],
    ['active', ['p1']],
    ['not active', ['p2', 'p3']], // null counts as false
    ['personal', ['p2']],
    ['not personal', ['p1', 'p3']],
    ['active or personal', ['p1', 'p2']],
    ['active and not personal', ['p1']],
    ['not not active', ['p1']],
    ["(active or personal) and name ne 'beta'", ['p1']],
    ["active or personal and name ne 'beta'", ['p1']], // and binds tighter
    ['true', ['p1', 'p2', 'p3']],
    ['false', []],
    ['not active eq true', ['p2', 'p3']], // (not active) eq true
  ])
})

t.test('arithmetic', async (t) => {
  check(t, [
    ['timeBudget add 5 eq 0', ['p3']],
    ['timeBudget sub 1 eq -1', ['p2']],
    ['timeBudget mul 2 eq -10', ['p3']],
    ['timeBudget div 3600000 eq 1', ['p1']],
    ['priceBudget div 4 eq 0.5', ['p3']],
    ['timeBudget mod 7 eq 5', ['p1']], // 3600000 = 514285 * 7 + 5
    ['timeBudget mod 2 eq -1', ['p3']], // sign of the dividend
    ['-timeBudget eq 5', ['p3']],
    ['- timeBudget gt 0', ['p3']],
    ['1 add 2 mul 3 eq 7', ['p1', 'p2', 'p3']],
    ['(1 add 2) mul 3 eq 9', ['p1', 'p2', 'p3']],
    // Arithmetic with null (or a division by zero) gives null, and every comparison with it is false, `eq null` too.
    ['priceBudget add 1 eq null', []],
    ['priceBudget add 1 ne null', ['p1', 'p3']],
    ['priceBudget add 1 ne 0', ['p1', 'p3']],
    ['priceBudget mul 2 le 4', ['p3']],
    ['timeBudget div 0 eq null', []],
    ['timeBudget div 0 ne null', []],
    ['timeBudget div 0 gt 0', []],
    ['timeBudget div 0 le 0', []],
    ['timeBudget mod 0 eq null', []],
    ['timeBudget mod 0 ne 1', []],
    ['-priceBudget eq null', []],
    ['-priceBudget ne 1', ['p1', 'p3']],
    ['not (priceBudget add 1 gt 1000)', ['p3']], // unknown for p2 stays unknown under not
    ['priceBudget add 1 gt 1000 or active eq false', ['p1', 'p2']],
    ["begins add 86400000 eq datetime'2024-01-11T00:00'", ['p1']],
    ["begins sub 86400000 lt datetime'2024-01-10T00:00'", ['p1']],
    ['ends sub begins gt 0', ['p1']],
  ])
})

t.test('string functions', async (t) => {
  check(t, [
    ["substringof('lph', name) eq true", ['p1']],
    ["substringof('lph', name)", ['p1']],
    ["substringof(name, 'xxAlphaxx')", ['p1']], // needle first
    ["substringof('', name)", ['p1', 'p2', 'p3']],
    ["startswith(name, 'Al') eq true", ['p1']],
    ["startswith(name, 'al')", []],
    ["startswith(name, 'A') and active eq true", ['p1']],
    ["endswith(name, 'ta')", ['p2']],
    ["not endswith(name, 'a')", ['p3']],
    ["endswith(name, 'a') eq false", ['p3']],
    ["startswith(code, 'A')", ['p1']],
    ["startswith(code, 'A') eq false", ['p3']], // startswith(null) is null, not false
    ["startswith(code, 'A') ne true", ['p3']], // ... and a comparison with null is false
    ["startswith(code, 'A') ne false", ['p1']],
    ["not startswith(code, 'A')", ['p3']], // not of unknown is unknown
    ["not not startswith(code, 'A')", ['p1']],
    ['length(name) eq 5', ['p1']],
    ['length(name) eq 4', ['p2']],
    ['length(code) eq null', []],
    ['length(code) ne null', ['p1', 'p3']],
    ['length(code) gt 0', ['p1', 'p3']],
    ['length(code) le 2', ['p1', 'p3']],
    ['length(code) lt 0', []],
    ['length(code) ge 0', ['p1', 'p3']],
    ["indexof(name, 'l') eq 1", ['p1']],
    ["indexof(name, 'A') eq 0", ['p1']],
    ["indexof(name, 'zz') eq -1", ['p1', 'p2', 'p3']],
    ["indexof(code, 'A') eq null", []],
    ["indexof(code, 'A') ne 0", ['p3']],
    ["tolower(name) eq 'alpha'", ['p1']],
    ["toupper(name) eq 'BETA'", ['p2']],
    ['tolower(code) eq null', []],
    ["tolower(code) ne 'a'", ['p1', 'p3']],
    ['tolower(code) ne null', ['p1', 'p3']],
    ['tolower(code) eq tolower(code)', ['p1', 'p3']],
    ["concat(name, code) eq 'AlphaA1'", ['p1']],
    ["concat(name, '!') eq 'beta!'", ['p2']],
    ['concat(name, code) eq null', []],
    ["concat(name, code) ne 'x'", ['p1', 'p3']],
    ["concat(concat(code, '-'), name) eq 'ON-O''Neil'", ['p3']],
    ["substring(name, 1) eq 'lpha'", ['p1']],
    ["substring(name, 1, 2) eq 'lp'", ['p1']],
    ["substring(name, 0, 100) eq 'Alpha'", ['p1']],
    ["substring(name, -3) eq 'Alpha'", ['p1']], // negative start counts as 0
    ["substring(name, -3, 2) eq 'Al'", ['p1']],
    ["substring(name, 5) eq ''", ['p1', 'p2']], // at the end of 'Alpha', past the end of 'beta'; O'Neil has 'l' at 5
    ["substring(name, 6) eq ''", ['p1', 'p2', 'p3']],
    ["substring(name, 1, -1) eq ''", ['p1', 'p2', 'p3']],
    ["substring(name, 1, 0) eq ''", ['p1', 'p2', 'p3']],
    ['substring(code, 1) eq null', []],
    ["substring(code, 1) ne '1'", ['p3']],
    ["substring(name, 1 add 1, length(name) sub 3) eq 'ph'", ['p1']],
    ['substring(name, timeBudget) eq name', ['p2', 'p3']], // 0 and -5 start at 0; 3600000 is past the end
  ])
})

t.test('unknown (a null function result) under and, or and not', async (t) => {
  check(t, [
    // p1: startswith(code, 'A') true; p2: unknown (code is null); p3: false.
    ["startswith(code, 'A') or name eq 'beta'", ['p1', 'p2']], // unknown or true is true
    ["startswith(code, 'A') or name eq 'x'", ['p1']], // unknown or false is unknown
    ["not (startswith(code, 'A') or name eq 'x')", ['p3']],
    ["startswith(code, 'A') and name eq 'x'", []],
    ["not (startswith(code, 'A') and name eq 'x')", ['p1', 'p2', 'p3']], // unknown and false is false
    ["not (startswith(code, 'A') and name eq 'beta')", ['p1', 'p3']], // unknown and true is unknown
    ["(startswith(code, 'A') or name eq 'x') eq false", ['p3']], // a comparison with unknown is false
    ["not (tolower(code) eq 'a1')", ['p3']],
    ["(tolower(code) eq 'a1') ne true", ['p3']],
    // A null field is a value, not unknown: these keep today's answers.
    ['not active', ['p2', 'p3']],
    ["not (code eq 'A1')", ['p2', 'p3']],
    ["code ne 'A1'", ['p2', 'p3']],
    ["not (owner/firstName eq 'Ann')", ['p2', 'p3']],
  ])
})

t.test('strings order by code point', async (t) => {
  const named = (name: string) => rec('x', { name, owner: 'u1' })
  const passes = (text: string, name: string) => compileFilter(Project, text).test(named(name), context)
  t.ok(passes("name gt '\uFFFF'", '\u{1F600}'), 'an astral character sorts above U+FFFF')
  t.notOk(passes("name lt '\uFFFF'", '\u{1F600}'))
  t.ok(passes("name gt '\uE000'", '\u{10000}'), 'and above the private use area')
  t.ok(passes("name lt '\u{1F601}'", '\u{1F600}'), 'two astral characters by their code points')
  t.ok(passes("name lt 'ab'", 'a'), 'a prefix sorts first')
  t.ok(passes("name ge 'a\u{1F600}'", 'a\u{1F600}'), 'equal strings')
  t.ok(passes("name le 'a\u{1F600}'", 'a\u{1F600}'))
})

t.test('paths through references', async (t) => {
  check(t, [
    ["owner/firstName eq 'Ann'", ['p1']],
    ["owner/firstName ne 'Ann'", ['p2', 'p3']], // a dangling owner reads as null
    ['owner/firstName eq null', ['p3']],
    ["owner/email eq 'bob@example.com'", ['p2']],
    ['owner/active eq true', ['p1']],
    ['owner/active', ['p1']],
    ["client/name eq 'Acme'", ['p1']],
    ['client/name eq null', ['p2', 'p3']],
    ["client/id eq 'c1'", ['p1']],
    ['client/id eq null', ['p2', 'p3']],
    ["owner/id eq 'u9'", ['p3']],
    ["owner eq 'u2'", ['p2']],
    ["'u2' eq owner", ['p2']],
    ["startswith(client/name, 'Ac')", ['p1']],
    ["tolower(owner/lastName) eq 'ray'", ['p2']],
    ["displayName eq 'beta'", ['p2']],
    ["owner/displayName eq 'Lee Ann'", ['p1']],
    ["createdAt eq datetime'2024-01-10T00:00'", ['p1', 'p2', 'p3']],
  ])
})

t.test('datetime comparisons', async (t) => {
  check(t, [
    ["begins eq datetime'2024-01-10T00:00'", ['p1']],
    ["begins eq datetime'2024-01-10T00:00:00.000Z'", ['p1']],
    ["begins ne datetime'2024-01-10T00:00'", ['p2', 'p3']],
    ["begins gt datetime'2024-01-10T00:00'", ['p2']],
    ["begins ge datetime'2024-01-10T00:00'", ['p1', 'p2']],
    ["begins lt datetime'2024-03-01T00:00'", ['p1']],
    ["begins le datetime'2024-03-01T00:00'", ['p1', 'p2']],
    ["datetime'2024-02-01T00:00' lt begins", ['p2']],
    ["begins ge datetime'2024-01-01T00:00' and begins lt datetime'2024-02-01T00:00'", ['p1']],
    ["ends gt datetime'2024-06-30T11:59:59.999'", ['p1']],
    ["ends gt datetime'2024-06-30T12:00'", []],
    ['begins lt ends', ['p1']],
    ['begins eq null', ['p3']],
  ])
})

t.test('other resources', async (t) => {
  const user = compileFilter(User, "email eq 'ann@example.com' and not active eq false")
  t.same(
    users.filter((u) => user.test(u, context)).map((u) => u.id),
    ['u1'],
  )
  const client = compileFilter(Client, "startswith(name, 'Ac')")
  t.ok(client.test(clients[0] as Rec, context))
})

t.test('compile errors are 400s that name the problem and its position', async (t) => {
  const cases: ReadonlyArray<readonly [string, RegExp]> = [
    ["nme eq 'x'", /no field 'nme'.*position 0/],
    ["name eq 'x' and owner/nickname eq 'y'", /no field 'nickname'.*position 16/],
    ["name/first eq 'x'", /not a reference.*position 0/],
    ["owner/password eq 'secret'", /no field 'password'.*position 0/],
    ['name add 1 eq 2', /'add' cannot combine a string with a number at position 5/],
    ['length(5) eq 1', /argument 1 of length must be a string, not a number at position 7/],
    ["startswith(active, 'x')", /argument 1 of startswith must be a string, not a boolean at position 11/],
    ['startswith(name, 1)', /argument 2 of startswith must be a string, not a number at position 17/],
    ["substring(name, 1, '2') eq 'x'", /argument 3 of substring must be a number, not a string at position 19/],
    ["substring(name, '1') eq 'x'", /argument 2 of substring must be a number/],
    ["tolower(begins) eq 'x'", /argument 1 of tolower must be a string, not a date/],
    ["startswith(client, 'c')", /must be a string, not a reference/],
    ['name eq 1', /'eq' cannot compare a string with a number at position 5/],
    ["timeBudget gt '5'", /'gt' cannot compare a number with a string at position 11/],
    ['active eq 1', /'eq' cannot compare a boolean with a number/],
    ["begins gt '2024-01-01'", /'gt' cannot compare a date with a string/],
    ['begins gt 0', /'gt' cannot compare a date with a number/],
    ["client lt 'c1'", /'lt' cannot compare a reference with a string/],
    ['client eq 1', /'eq' cannot compare a reference with a number/],
    ['name', /must be a boolean expression, not a string at position 0/],
    ['1 add 2', /must be a boolean expression, not a number at position 0/],
    ['null', /must be a boolean expression, not null/],
    ['tolower(name)', /must be a boolean expression/],
    ['timeBudget', /must be a boolean expression/],
    ['not name', /'not' needs a boolean, not a string at position 0/],
    ['active and name', /'and' needs booleans, not a string at position 7/],
    ['name or active', /'or' needs booleans, not a string at position 5/],
    ["-name eq 'x'", /'-' needs a number, not a string at position 0/],
    ["begins mul 2 gt datetime'2024-01-01T00:00'", /'mul' cannot combine a date with a number/],
    ['1 sub begins gt 0', /'sub' cannot combine a number with a date/],
    ['active and null', /'and' needs booleans, not null/],
  ]
  for (const [text, message] of cases) {
    const err = compileError(text)
    t.ok(err instanceof ApiError, `${text} is refused`)
    t.equal(err?.code, 'TL01-1105', `code of ${text}`)
    t.equal(err?.status, 400, `status of ${text}`)
    t.match(err?.message, /^\$filter: /, `message of ${text} starts with $filter`)
    t.match(err?.message, message, `message of ${text}`)
  }
})

t.test('syntax errors and limits', async (t) => {
  for (const text of ['name eq', "name eq 'x' and", 'name eq eq', 'year(begins) eq 2024', "(name eq 'x'", "name EQ 'x'", '', "begins eq datetime'2024-02-30T00:00'"]) {
    const err = compileError(text)
    t.equal(err?.code, 'TL01-1105', `${JSON.stringify(text)} is a 400`)
    t.match(err?.message, /^\$filter: .*position \d+/, `${JSON.stringify(text)} names a position`)
  }
  t.match(compileError('name eq')?.message, /position 7/)
  t.match(compileError('year(begins) eq 2024')?.message, /Unknown function 'year' at position 0/)
  t.notMatch(compileError('name eq')?.message, /position 7.*position 7/, 'the position is not repeated')

  const long = `name eq '${'x'.repeat(4096)}'`
  const err = compileError(long)
  t.equal(err?.code, 'TL01-9002', 'a filter over 4096 characters is a limit error')
  t.equal(err?.status, 412)
  t.match(err?.message, /^\$filter: .*4096/)
  t.equal(compileError(`name eq '${'x'.repeat(4096 - 10)}'`), undefined, 'exactly 4096 characters compile')
  t.equal(compileError(`${'('.repeat(70)}active${')'.repeat(70)}`)?.code, 'TL01-9002', 'deep nesting is a limit error')
})

t.test('equalities: index pins from top-level and', async (t) => {
  const pins = (text: string, decl = Project): Record<string, unknown> => Object.fromEntries(compileFilter(decl, text).equalities)
  t.same(pins("owner/id eq 'u1'"), { owner: 'u1' })
  t.same(pins("owner eq 'u1'"), { owner: 'u1' })
  t.same(pins("'u1' eq owner/id"), { owner: 'u1' }, 'literal on the left')
  t.same(pins("client/id eq 'c1' and owner/id eq 'u1' and active eq true"), { client: 'c1', owner: 'u1' })
  t.same(pins("(client/id eq 'c1' and name eq 'x') and (owner/id eq 'u1')"), { client: 'c1', owner: 'u1' }, 'parentheses around and-groups')
  t.same(pins('client eq null'), { client: null })
  t.same(pins("email eq 'ann@example.com'", User), { email: 'ann@example.com' })
  t.same(pins("name eq 'Alpha'"), {}, 'name is not indexed')
  t.same(pins("id eq 'p1'"), { id: 'p1' }, 'id: the primary map')
  t.same(pins("'p1' eq id and owner/id eq 'u1'"), { id: 'p1', owner: 'u1' })
  t.same(pins("id ne 'p1'"), {})
  t.same(pins("owner/firstName eq 'Ann'"), {}, 'a field behind a reference is not a pin')
  t.same(pins("owner/id ne 'u1'"), {}, 'ne is not a pin')
  t.same(pins("owner/id eq 'u1' or active"), {}, 'not under or')
  t.same(pins("active or owner/id eq 'u1'"), {})
  t.same(pins("not (owner/id eq 'u1')"), {}, 'not under not')
  t.same(pins("active and (owner/id eq 'u1' or client/id eq 'c1')"), {}, 'not under a nested or')
  t.same(pins("tolower(email) eq 'ann@example.com'", User), {}, 'not through a function')
  t.same(pins("(owner/id eq 'u1') eq true"), {}, 'not a member against a literal')
  t.same(pins('owner/id eq owner/id'), {})

  // A pin never changes the answer: every record that passes has the pinned value.
  const filter = compileFilter(Project, "owner/id eq 'u2' and active eq false")
  for (const item of projects) if (filter.test(item, context)) t.equal(item.owner, 'u2')
})

t.test('ranges: Date bounds from top-level and', async (t) => {
  const ranges = (text: string): Record<string, unknown> => Object.fromEntries(compileFilter(Project, text).ranges)
  const jan1 = Date.UTC(2024, 0, 1)
  const feb1 = Date.UTC(2024, 1, 1)
  t.same(ranges("begins ge datetime'2024-01-01T00:00'"), { begins: { low: jan1, lowInclusive: true, highInclusive: false } })
  t.same(ranges("begins gt datetime'2024-01-01T00:00' and begins le datetime'2024-02-01T00:00'"), {
    begins: { low: jan1, lowInclusive: false, high: feb1, highInclusive: true },
  })
  t.same(ranges("datetime'2024-01-01T00:00' lt begins"), { begins: { low: jan1, lowInclusive: false, highInclusive: false } }, 'literal on the left flips the operator')
  t.same(ranges("datetime'2024-02-01T00:00' ge ends"), { ends: { high: feb1, highInclusive: true, lowInclusive: false } })
  t.same(
    ranges("begins ge datetime'2024-01-01T00:00' and begins gt datetime'2024-02-01T00:00' and begins gt datetime'2024-01-15T00:00'"),
    {
      begins: { low: feb1, lowInclusive: false, highInclusive: false },
    },
    'the tightest low bound wins',
  )
  t.same(
    ranges("begins ge datetime'2024-01-01T00:00' and begins gt datetime'2024-01-01T00:00'"),
    {
      begins: { low: jan1, lowInclusive: false, highInclusive: false },
    },
    'exclusive is tighter at the same instant',
  )
  t.same(
    ranges("begins le datetime'2024-02-01T00:00' and begins lt datetime'2024-02-01T00:00' and begins le datetime'2024-03-01T00:00'"),
    {
      begins: { high: feb1, highInclusive: false, lowInclusive: false },
    },
    'the tightest high bound wins',
  )
  t.same(ranges("begins ge datetime'2024-01-01T00:00' and ends lt datetime'2024-02-01T00:00' and active"), {
    begins: { low: jan1, lowInclusive: true, highInclusive: false },
    ends: { high: feb1, highInclusive: false, lowInclusive: false },
  })
  t.same(ranges("createdAt lt datetime'2024-02-01T00:00'"), { createdAt: { high: feb1, highInclusive: false, lowInclusive: false } })
  t.same(ranges("begins ge datetime'2024-01-01T00:00' or active"), {}, 'not under or')
  t.same(ranges("not (begins ge datetime'2024-01-01T00:00')"), {}, 'not under not')
  t.same(ranges("begins eq datetime'2024-01-01T00:00'"), {}, 'eq gives no range')
  t.same(ranges("begins ne datetime'2024-01-01T00:00'"), {})
  t.same(ranges("owner/createdAt gt datetime'2024-01-01T00:00'"), {}, 'only fields of the resource itself')
  t.same(ranges("begins add 1 gt datetime'2024-01-01T00:00'"), {}, 'not through arithmetic')
  t.same(ranges('begins lt ends'), {})
  t.same(ranges('timeBudget gt 5'), {})
})

t.test('compiled filters are reusable and independent of the text', async (t) => {
  const filter = compileFilter(Project, "name eq 'Alpha' or name eq 'beta'")
  t.same(
    projects.filter((item) => filter.test(item, context)).map((item) => item.id),
    ['p1', 'p2'],
  )
  t.same(
    projects.filter((item) => filter.test(item, context)).map((item) => item.id),
    ['p1', 'p2'],
    'same answer on a second run',
  )
  t.same(matching("name eq 'x'') or true or name eq ('"), [], 'quotes stay inside the literal')
  t.ok(compileError("name eq 'a' or process/exit eq 1") instanceof ApiError, 'unknown path, never code')
})
