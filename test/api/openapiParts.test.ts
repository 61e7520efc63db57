/*
 * Parts of the OpenAPI description (issue 38; openapi/documentParts.ts),
 * which the reference page loads instead of the whole: `?tags=` answers
 * the outline (every tag, the security schemes, no operation), `?tags=A,B`
 * the operations of those tags with every component they refer to; each
 * part is valid OpenAPI 3.1 by a maintained validator and refers only to
 * what it holds, the tags' parts together hold every operation of the
 * whole, and a tag the description lacks is 400.
 */
import { Validator } from '@seriousme/openapi-schema-validator'
import t from 'tap'
import type { AnswerJson } from '../helpers/http.js'
import { startInProcess } from '../helpers/server.js'

type Json = Record<string, AnswerJson>

const server = await startInProcess()
t.teardown(() => server.stop())
const { client } = server
const whole = (await client.request('GET', '/v1/openapi.json')).json as Json
const part = async (tags: string): Promise<Json> => {
  const answer = await client.request('GET', '/v1/openapi.json', { query: { tags } })
  if (answer.status !== 200) throw new Error(`tags=${tags}: ${answer.status} ${answer.text}`)
  return answer.json as Json
}

/** Every `$ref` of `value`. */
function refsOf(value: unknown, found: string[] = []): string[] {
  if (Array.isArray(value)) for (const item of value) refsOf(item, found)
  else if (typeof value === 'object' && value !== null) {
    for (const [key, inner] of Object.entries(value)) {
      if (key === '$ref' && typeof inner === 'string') found.push(inner)
      else refsOf(inner, found)
    }
  }
  return found
}

/** Whether a `#/…` pointer names something in `doc`. */
function resolves(doc: Json, ref: string): boolean {
  let at: unknown = doc
  for (const part of ref.slice(2).split('/')) at = (at as Json | undefined)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')]
  return at !== undefined
}

/** `METHOD path` of every operation of a document. */
function operationsOf(doc: Json): string[] {
  return Object.entries(doc.paths as Record<string, Json>).flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`))
}

t.test('the outline: every tag, the security schemes, no operation; valid', async (t) => {
  const outline = await part('')
  t.same(outline.paths, {})
  t.same(outline.tags, whole.tags, 'every tag, with its description')
  t.same(outline.info, whole.info)
  t.same(outline.servers, whole.servers)
  t.same(Object.keys(outline.components), ['securitySchemes'])
  t.same(outline.components.securitySchemes, whole.components.securitySchemes, 'Authorize works from the start')
  const result = await new Validator().validate(structuredClone(outline))
  t.equal(result.valid, true, JSON.stringify(result.errors ?? null).slice(0, 1000))
  t.ok(JSON.stringify(outline).length < JSON.stringify(whole).length / 50, 'a small fraction of the whole')
})

t.test('a tag: its operations and what they refer to; valid, self-contained', async (t) => {
  const project = await part('Project')
  const operations = operationsOf(project)
  t.ok(operations.includes('GET /time/projects') && operations.includes('PATCH /time/projects/{id}'), 'the Project operations')
  for (const item of Object.values(project.paths as Record<string, Json>))
    for (const operation of Object.values(item)) t.ok(operation.tags.includes('Project'), `${operation.operationId} is tagged Project`)
  t.same(
    refsOf(project).filter((ref) => !resolves(project, ref)),
    [],
    'every $ref resolves inside the part',
  )
  t.ok(project.components.schemas.Project && project.components.schemas.ProjectInput && project.components.schemas.Error, 'with the schemas it uses')
  t.notOk(project.components.schemas.Bill, 'and not those it does not')
  const result = await new Validator().validate(structuredClone(project))
  t.equal(result.valid, true, JSON.stringify(result.errors ?? null).slice(0, 1000))
  const two = await part('Task,Project')
  t.same(operationsOf(two).sort(), [...operations, ...operationsOf(await part('Task'))].sort(), 'two tags: both')
})

t.test("the tags' parts hold every operation of the whole; an unknown tag is 400", async (t) => {
  const declared = new Set((whole.tags as { name: string }[]).map((tag) => tag.name))
  const undeclared = Object.values(whole.paths as Record<string, Json>).flatMap((item) => Object.values(item).flatMap((operation) => (operation.tags as string[]).filter((tag) => !declared.has(tag))))
  t.same([...new Set(undeclared)], [], 'every tag an operation has is declared (the outline lists the declared ones)')
  const all: string[] = []
  for (const tag of whole.tags as { name: string }[]) all.push(...operationsOf(await part(tag.name)))
  t.same([...new Set(all)].sort(), operationsOf(whole).sort())
  const unknown = await client.request('GET', '/v1/openapi.json', { query: { tags: 'Nope' } })
  t.equal(unknown.status, 400)
  t.equal(unknown.json.code, 'TL01-1105')
  t.match(unknown.json.message, /no tag 'Nope'.*Project/)
  t.same((await client.request('GET', '/v1/openapi.json', { query: { tags: 'Project' }, tenant: null })).json, await part('Project'), 'the same on the public address')
})
