/*
 * HTTP fuzzing of request bodies, headers and paths against a real server.
 *
 * Bodies (JSON and XML) for the write calls: wrong types, huge strings,
 * deep nesting, invalid UTF-8, duplicate keys, unknown fields,
 * `__proto__` / `constructor` / `prototype` keys, entity declarations, and
 * byte mutations of valid bodies; batch bodies with random items. Paths:
 * encoded slashes, `..`, long segments, bad percent-encoding, odd query
 * options. Headers, over raw sockets: Host variants, Content-Type, and
 * Content-Length lies (shorter or longer than the body, not a number,
 * twice, with chunked encoding).
 *
 * Checks: never a 5xx; every error answer in the body of ARCHITECTURE.md §4; a
 * refused request changes nothing stored (the tenant's log sequence stays,
 * and a full dump of its collections is compared whenever only refusals
 * came in between); the server stays alive and a normal request works.
 * FUZZ_INPUTS / FUZZ_SEED: see helpers/fuzz.ts.
 */
import http from 'node:http'
import net from 'node:net'
import t from 'tap'
import { snapshotBodyOf } from '../../src/tenants/recovery.js'
import { api, ref } from '../helpers/api.js'
import { expectWithSeed, fuzzInputs, fuzzSeed, isErrorBody, mutateMany, Random } from '../helpers/fuzz.js'
import { startInProcess, TEST_API_KEY } from '../helpers/server.js'

const INPUTS = fuzzInputs(2000)
const RAW_SHARE = 0.08
const seed = fuzzSeed()
const random = new Random(seed)
t.comment(`fuzz seed ${seed} (FUZZ_SEED=${seed} repeats this run), ${INPUTS} inputs`)

const server = await startInProcess(undefined, { RATE_LIMIT_REQUESTS: '0', LOGIN_FAILURES_ALLOWED: '0', MAX_BODY_BYTES: '262144' })
t.teardown(() => server.stop())
const owner = await server.client.createTenant('fz')
const a = api(server.client, 'fz', owner.token)
const me = (await a.get('users/@self')).json.id as string
const projectId = await a.create('time/projects', { name: 'Target' })
const actor = server.service.services.registry.get('fz')
if (actor === undefined) throw new Error('no tenant')
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
t.teardown(() => agent.destroy())

interface Answer {
  status: number
  contentType: string
  text: string
}

function send(method: string, path: string, headers: Record<string, string>, body: Buffer | null): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = http.request({ host: '127.0.0.1', port: server.client.port, method, path, headers, agent }, (response) => {
      const chunks: Buffer[] = []
      response.on('data', (chunk: Buffer) => chunks.push(chunk))
      response.on('end', () => resolve({ status: response.statusCode ?? 0, contentType: String(response.headers['content-type'] ?? ''), text: Buffer.concat(chunks).toString('utf8') }))
      response.on('error', reject)
    })
    request.setTimeout(10_000, () => request.destroy(new Error(`${method} ${path} timed out`)))
    request.on('error', reject)
    request.end(body ?? undefined)
  })
}

/** An error answer in the body of ARCHITECTURE.md §4, in whichever format was asked for. */
function wellFormedError(answer: Answer): boolean {
  if (answer.contentType.includes('xml')) {
    return /<code>TL01-\d{4}<\/code>/.test(answer.text) && answer.text.includes(`<status>${answer.status}</status>`) && answer.text.includes('<message>')
  }
  let text = answer.text
  const jsonp = /^[A-Za-z_$][\w$.]*\(([\s\S]*)\);$/.exec(text)
  if (answer.contentType.includes('javascript') && jsonp !== null) text = jsonp[1] as string
  try {
    return isErrorBody(JSON.parse(text), answer.status)
  } catch {
    return false
  }
}

// ---------------------------------------------------------------------------
// Bodies

interface Target {
  method: string
  path: string
  template: Record<string, unknown> | unknown[]
  xmlRoot: string
  publicUrl?: boolean
}

const TARGETS: Target[] = [
  {
    method: 'POST',
    path: '/v1/time/projects',
    template: { name: 'P', code: 'C1', note: 'n', timeBudget: 10, priceBudget: 1.5, active: true, begins: '2024-01-01T00:00:00Z', client: null },
    xmlRoot: 'project',
  },
  { method: 'PUT', path: `/v1/time/projects/${projectId}?version_ignore=true`, template: { name: 'Renamed', version: 1, active: false }, xmlRoot: 'project' },
  { method: 'POST', path: '/v1/time/timerecords', template: { user: ref(me), project: ref(projectId), duration: 1000, start: '/Date(1700000000000)/', description: 'd' }, xmlRoot: 'timeRecord' },
  { method: 'POST', path: '/v1/time/clients', template: { name: 'Client', email: 'c@x.test' }, xmlRoot: 'client' },
  { method: 'POST', path: '/v1/users', template: { firstName: 'F', lastName: 'L', email: 'someone@fz.test', password: 'password-1' }, xmlRoot: 'user' },
  { method: 'POST', path: `/v1/time/projects/${projectId}/tasks`, template: { name: 'Task' }, xmlRoot: 'task' },
  { method: 'POST', path: '/v1/time/impulses', template: { user: ref(me), mode: 'PAUSE' }, xmlRoot: 'impulse' },
  { method: 'POST', path: '/v1/storage/group/key', template: { value: 'v' }, xmlRoot: 'storage' },
  { method: 'POST', path: '/v1/batch', template: [{ id: '1', method: 'POST', path: '/v1/time/projects', body: '{"name":"b"}', transaction: 'T' }], xmlRoot: 'batch' },
  {
    method: 'POST',
    path: `/v1/register/signup?apikey=${TEST_API_KEY}`,
    template: { account: { name: 'N', urlPrefix: 'fzz' }, owner: { firstName: 'A', lastName: 'B', email: 'a@b.test', password: 'password-1' } },
    xmlRoot: 'signup',
    publicUrl: true,
  },
]

const WEIRD_VALUES: unknown[] = [
  null,
  true,
  false,
  0,
  -1,
  1.5,
  1e308,
  -1e308,
  2 ** 53 + 2,
  '',
  ' ',
  'x'.repeat(70_000),
  '/Date(abc)/',
  '/Date(99999999999999999)/',
  '2024-13-40T25:61:00Z',
  [],
  [1, 2],
  {},
  { id: 5 },
  { id: 'x'.repeat(100) },
  { id: { id: 'nested' } },
  'é😀\u0000\u202e',
  '\ud800',
  { __proto__: { polluted: true } },
  '<script>',
]

function deepJson(depth: number): string {
  return random.chance(0.5) ? `${'['.repeat(depth)}1${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`
}

function jsonBody(target: Target): string {
  const body = JSON.parse(JSON.stringify(target.template)) as Record<string, unknown>
  const keys = Object.keys(body)
  switch (random.int(10)) {
    case 0: {
      const key = random.pick(keys.length > 0 ? keys : ['0'])
      body[key] = random.pick(WEIRD_VALUES)
      return JSON.stringify(body)
    }
    case 1:
      return deepJson(random.pick([10, 1000, 100_000]))
    case 2: {
      const key = random.pick(['__proto__', 'constructor', 'prototype', 'hasOwnProperty', 'toString', 'id', 'version', 'trashItem', 'createdAt'])
      const inner = random.pick(['{"polluted":true}', '{"prototype":{"polluted":true}}', 'null', '"x"', '1'])
      const text = JSON.stringify(body)
      return text === '{}' || !text.startsWith('{') ? `{"${key}":${inner}}` : `{"${key}":${inner},${text.slice(1)}`
    }
    case 3: {
      const key = random.pick(keys.length > 0 ? keys : ['name'])
      const text = JSON.stringify(body)
      return text.startsWith('{') ? `{"${key}":${JSON.stringify(random.pick(WEIRD_VALUES))},${text.slice(1)}` : text
    }
    case 4:
      return JSON.stringify(random.pick(WEIRD_VALUES))
    case 5:
      return JSON.stringify({ ...body, [`unknown${random.int(100)}`]: random.pick(WEIRD_VALUES), ['x'.repeat(random.pick([1, 5000]))]: 1 })
    case 6:
      return JSON.stringify(random.chance(0.5) ? [body, body] : Array.from({ length: random.pick([0, 101, 5000]) }, () => body))
    default:
      return mutateMany(random, JSON.stringify(body), ['{', '}', '[', ']', '"', ':', ',', 'null', '1e999', '\\u0000', '\\ud800'])
  }
}

function xmlOf(value: unknown, name: string): string {
  if (Array.isArray(value)) return value.map((item) => xmlOf(item, name)).join('')
  if (value !== null && typeof value === 'object') {
    return `<${name}>${Object.entries(value)
      .map(([key, inner]) => xmlOf(inner, key))
      .join('')}</${name}>`
  }
  return `<${name}>${value === null ? '' : String(value).replace(/&/g, '&amp;').replace(/</g, '&lt;')}</${name}>`
}

function xmlBody(target: Target): string {
  const valid = xmlOf(target.template, target.xmlRoot)
  switch (random.int(8)) {
    case 0:
      return `<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]><${target.xmlRoot}><name>&c;&c;&c;</name></${target.xmlRoot}>`
    case 1: {
      const depth = random.pick([10, 1000, 50_000])
      return `${'<a>'.repeat(depth)}x${'</a>'.repeat(depth)}`
    }
    case 2:
      return `<${target.xmlRoot}><__proto__><polluted>true</polluted></__proto__><constructor><prototype>1</prototype></constructor><name>x</name><name>y</name></${target.xmlRoot}>`
    case 3:
      return `<${target.xmlRoot} id="attr"><![CDATA[<name>x</name>]]><name a="1">${'x'.repeat(random.pick([10, 70_000]))}</name></${target.xmlRoot}>`
    case 4:
      return `<?xml version="1.0"?><!DOCTYPE r SYSTEM "file:///etc/passwd"><${target.xmlRoot}><name>&xxe;</name></${target.xmlRoot}>`
    case 5:
      return `<a></a><b></b>`
    default:
      return mutateMany(random, valid, ['<', '>', '</', '/>', '&', '&amp;', '&#0;', '&#x110000;', '<![CDATA[', '<!--', '"'])
  }
}

const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'application/xml',
  'text/xml',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  '',
  'application/json; charset=latin1',
  '*/*',
  'x'.repeat(300),
]

function bodyCase(): { target: Target; headers: Record<string, string>; body: Buffer; label: string } {
  const target = random.pick(TARGETS)
  const xml = random.chance(0.3)
  let body = Buffer.from(xml ? xmlBody(target) : jsonBody(target))
  if (random.chance(0.05)) {
    const at = random.int(body.length + 1)
    body = Buffer.concat([body.subarray(0, at), Buffer.from(random.pick([[0xff], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0xe2, 0x82]])), body.subarray(at)])
  }
  const contentType = random.chance(0.85) ? (xml ? 'application/xml' : 'application/json') : random.pick(CONTENT_TYPES)
  const headers: Record<string, string> = { host: target.publicUrl === true ? 'localhost' : 'fz.localhost', 'content-length': String(body.length) }
  if (contentType !== '') headers['content-type'] = contentType
  if (random.chance(0.1)) headers.accept = random.pick(['application/xml', 'text/html', '*/*', 'application/json;q=0'])
  return { target, headers, body, label: `${target.method} ${target.path} ${contentType} ${body.subarray(0, 300).toString('latin1')}` }
}

// ---------------------------------------------------------------------------
// Paths and queries

const PATH_PIECES = [
  'time',
  'projects',
  'timerecords',
  projectId,
  '$count',
  '$set',
  '$metadata',
  '@deleted',
  'users',
  '@self',
  'storage',
  'batch',
  'trash',
  'reports',
  'readtotals',
  '..',
  '.',
  '%2e%2e',
  '%2F',
  '..%2F..%2Fetc%2Fpasswd',
  '%',
  '%zz',
  '%c0%af',
  '%00',
  '%ff',
  '%ED%A0%80',
  'é',
  '😀',
  '',
  'x'.repeat(1025),
  'y'.repeat(20_000),
  'a.json',
  ';',
  '*',
]
const QUERY_PIECES = [
  '$top=-1',
  '$top=abc',
  '$top=1e99',
  '$skip=99999999999',
  '$filter=',
  "$filter=name eq 'x",
  '$orderby=nope',
  'method=DELETE',
  'method=PUT',
  'format=xml',
  'callback=cb',
  'callback=alert(1)',
  'version_ignore=true',
  'response_object=true',
  'suppress_response_code=true',
  '%zz=1',
  'a=%',
  '&&&',
  'token=wrong',
  `token=${owner.token}`,
  'name=x'.repeat(2000),
]

function pathCase(): { method: string; path: string; headers: Record<string, string> } {
  const segments = Array.from({ length: 1 + random.int(5) }, () => random.pick(PATH_PIECES))
  const prefix = random.chance(0.9) ? '/v1/' : random.pick(['/', '//v1//', '/v2/', '/V1/', ''])
  const query = Array.from({ length: random.int(4) }, () => random.pick(QUERY_PIECES))
  if (random.chance(0.8)) query.push(`token=${owner.token}`)
  const path = `${prefix}${segments.join('/')}${query.length > 0 ? `?${query.join('&')}` : ''}`
  const method = random.pick(['GET', 'GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD'])
  // Node's client sends no raw non-ASCII in a path: such characters go percent-encoded (raw bytes are the raw cases' job).
  const sendable = path.replace(/[^\x21-\x7e]/gu, (character) => encodeURIComponent(character))
  return { method, path: sendable.startsWith('/') ? sendable : `/${sendable}`, headers: { host: 'fz.localhost', 'content-length': '0' } }
}

// ---------------------------------------------------------------------------
// Headers over raw sockets

interface RawAnswer {
  status: number
  headers: Record<string, string>
  body: string
}

/** Writes raw bytes, collects every complete answer until the server closes or `waitMs` passes. */
function rawExchange(bytes: Buffer, waitMs: number): Promise<RawAnswer[]> {
  return new Promise((resolve) => {
    const socket = net.connect(server.client.port, '127.0.0.1')
    let received = Buffer.alloc(0)
    const finish = () => {
      clearTimeout(timer)
      socket.destroy()
      resolve(parseAnswers(received))
    }
    const timer = setTimeout(finish, waitMs)
    socket.on('data', (chunk: Buffer) => (received = Buffer.concat([received, chunk])))
    socket.on('error', finish)
    socket.on('close', finish)
    socket.write(bytes)
  })
}

function parseAnswers(bytes: Buffer): RawAnswer[] {
  const answers: RawAnswer[] = []
  let rest = bytes
  for (;;) {
    const end = rest.indexOf('\r\n\r\n')
    if (end < 0) return answers
    const [statusLine, ...lines] = rest.subarray(0, end).toString('latin1').split('\r\n')
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? '')?.[1] ?? 0)
    const headers: Record<string, string> = {}
    for (const line of lines) {
      const colon = line.indexOf(':')
      if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
    }
    const length = Number(headers['content-length'] ?? 0)
    if (rest.length < end + 4 + length) return answers
    answers.push({ status, headers, body: rest.subarray(end + 4, end + 4 + length).toString('utf8') })
    rest = rest.subarray(end + 4 + length)
  }
}

const HOSTS = [
  'fz.localhost',
  'FZ.LOCALHOST',
  'fz.localhost:1',
  'fz.localhost.',
  'localhost',
  '',
  'x'.repeat(5000),
  'fz.localhost.evil.test',
  'fz..localhost',
  'nobody.localhost',
  '[::1]',
  'fz.localhost:abc',
  'é.localhost',
  'fz.localhost\tx',
]

function rawCase(): { bytes: Buffer; label: string } {
  const body = Buffer.from(random.chance(0.5) ? '{"name":"raw"}' : jsonBody(TARGETS[0] as Target))
  const host = random.pick(HOSTS)
  const lines = [`POST /v1/time/projects?token=${owner.token} HTTP/1.1`]
  if (random.chance(0.95)) lines.push(`Host: ${host}`)
  if (random.chance(0.9)) lines.push(`Content-Type: ${random.pick(CONTENT_TYPES)}`)
  let payload = body
  switch (random.int(8)) {
    case 0:
      lines.push(`Content-Length: ${Math.max(0, body.length - 1 - random.int(body.length))}`)
      break
    case 1:
      lines.push(`Content-Length: ${body.length + 1 + random.int(1000)}`)
      break
    case 2:
      lines.push(`Content-Length: ${random.pick(['-1', 'abc', '1e3', '0x10', ' 12', '99999999999999999999', ''])}`)
      break
    case 3:
      lines.push(`Content-Length: ${body.length}`, `Content-Length: ${body.length + 5}`)
      break
    case 4:
      lines.push('Transfer-Encoding: chunked')
      payload = Buffer.from(
        random.pick([
          `${body.length.toString(16)}\r\n${body.toString()}\r\n0\r\n\r\n`,
          `zz\r\n${body.toString()}\r\n0\r\n\r\n`,
          `${(body.length + 9).toString(16)}\r\n${body.toString()}\r\n0\r\n\r\n`,
          `${body.length.toString(16)}\r\n${body.toString()}`,
        ]),
      )
      break
    case 5:
      lines.push('Transfer-Encoding: chunked', `Content-Length: ${body.length}`)
      break
    case 6:
      lines.push(`Content-Length: ${body.length}`, `X-Junk: ${'j'.repeat(random.pick([10, 10_000, 100_000]))}`)
      break
    default:
      lines.push(`Content-Length: ${body.length}`)
  }
  const bytes = Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), payload])
  return { bytes, label: bytes.subarray(0, 400).toString('latin1') }
}

// ---------------------------------------------------------------------------
// The run

const dump = () => JSON.stringify(snapshotBodyOf(actor.state))

t.test('bodies, paths and headers: no 5xx, error bodies as designed, refusals change nothing', async (t) => {
  let tried = 0
  let fiveHundreds = 0
  let malformedErrors = 0
  let changedByRefusal = 0
  let accepted = 0
  let refused = 0
  let failures = 0
  let dumpSeq = actor.state.seq
  let dumpText = dump()
  const tenants = server.service.services.registry.names().length
  let signups = 0
  const rawBatch: { bytes: Buffer; label: string }[] = []
  let previous = ''
  let rawSent = 0
  let rawUnanswered = 0

  const runRawBatch = async () => {
    const seqBefore = actor.state.seq
    const results = await Promise.all(rawBatch.map((item) => rawExchange(item.bytes, 250)))
    let writes = 0
    let unansweredHere = 0
    for (const [index, answers] of results.entries()) {
      const item = rawBatch[index] as { label: string }
      rawSent += 1
      if (answers.length === 0) {
        rawUnanswered += 1
        unansweredHere += 1
      }
      for (const answer of answers) {
        if (answer.status >= 500) fiveHundreds += 1
        if (!expectWithSeed(t, answer.status > 0 && answer.status < 500, seed, `raw request answered ${answer.status} ${answer.body.slice(0, 200)}`, item.label)) failures += 1
        if (answer.status === 201) writes += 1
        if (answer.status >= 400) {
          let ok = false
          try {
            ok = isErrorBody(JSON.parse(answer.body), answer.status)
          } catch {
            ok = false
          }
          if (!ok) malformedErrors += 1
          if (!expectWithSeed(t, ok, seed, `raw error answer is not in the error format: ${answer.status} ${answer.body.slice(0, 200)}`, item.label)) failures += 1
        }
      }
    }
    if (
      !expectWithSeed(
        t,
        // A request given no answer within its wait (a body it never finished, or a loaded machine) may still have been written.
        actor.state.seq - seqBefore >= writes && actor.state.seq - seqBefore <= writes + unansweredHere,
        seed,
        `raw requests logged ${actor.state.seq - seqBefore} entries for ${writes} accepted writes (${unansweredHere} requests unanswered)`,
        rawBatch.map((item) => item.label),
      )
    )
      failures += 1
    rawBatch.length = 0
    dumpSeq = actor.state.seq
    dumpText = dump()
  }

  for (let index = 0; index < INPUTS && failures < 5; index += 1) {
    tried += 1
    if (random.chance(RAW_SHARE)) {
      rawBatch.push(rawCase())
      if (rawBatch.length >= 16) await runRawBatch()
      continue
    }
    const usePath = random.chance(0.3)
    const made = usePath ? { ...pathCase(), body: null as Buffer | null, label: '' } : bodyCase()
    const method = usePath ? (made as { method: string }).method : (made as { target: Target }).target.method
    const path = usePath ? (made as { path: string }).path : `${(made as { target: Target }).target.path}${(made as { target: Target }).target.path.includes('?') ? '&' : '?'}token=${owner.token}`
    const label = usePath ? `${method} ${path}` : made.label
    const seqBefore = actor.state.seq
    let answer: Answer
    try {
      answer = await send(method, path, made.headers, made.body)
    } catch (error) {
      failures += 1
      expectWithSeed(t, false, seed, `request failed at the socket: ${String(error)} (the request before: ${previous.slice(0, 300)})`, label)
      continue
    }
    previous = label
    if (answer.status >= 500) fiveHundreds += 1
    if (!expectWithSeed(t, answer.status < 500, seed, `answered ${answer.status} ${answer.text.slice(0, 300)}`, label)) failures += 1
    if (answer.status >= 400 && method !== 'HEAD') {
      refused += 1
      if (!wellFormedError(answer)) malformedErrors += 1
      if (!expectWithSeed(t, wellFormedError(answer), seed, `error answer not in the error format: ${answer.status} ${answer.contentType} ${answer.text.slice(0, 300)}`, label)) failures += 1
      if (actor.state.seq !== seqBefore) changedByRefusal += 1
      if (!expectWithSeed(t, actor.state.seq === seqBefore, seed, `a refused request (${answer.status}) logged an entry`, label)) failures += 1
    } else {
      accepted += 1
      if (!usePath && (made as { target: Target }).target.publicUrl === true) signups += 1
    }
    if (index % 50 === 0) {
      if (actor.state.seq === dumpSeq) {
        const now = dump()
        if (now !== dumpText) changedByRefusal += 1
        if (!expectWithSeed(t, now === dumpText, seed, 'the stored collections changed while only refusals came in', label)) failures += 1
      }
      dumpSeq = actor.state.seq
      dumpText = dump()
    }
  }
  if (rawBatch.length > 0) await runRawBatch()
  t.equal(
    failures,
    0,
    `${tried} inputs: ${accepted} accepted, ${refused} refused with 4xx, 5xx seen ${fiveHundreds}, malformed error bodies ${malformedErrors}, refusals that changed data ${changedByRefusal}`,
  )
  t.equal(fiveHundreds, 0, 'no 5xx')
  t.ok(server.service.services.registry.names().length <= tenants + signups, 'no tenant made by a refused sign-up')
  const alive = await a.get('time/projects/$count')
  t.equal(alive.status, 200, 'the server is alive and a normal request works')
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype is not polluted')
  console.log(
    `FUZZ_FIGURES http inputs=${tried} accepted=${accepted} refused=${refused} fiveHundreds=${fiveHundreds} malformed=${malformedErrors} changedByRefusal=${changedByRefusal} raw=${rawSent} rawUnanswered=${rawUnanswered}`,
  )
})
