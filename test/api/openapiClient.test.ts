/*
 * A client developer's path: TypeScript types generated from the served
 * description with openapi-typescript, and a small client written against
 * them. The client must type-check (TypeScript compiler API, strict) and,
 * compiled, work against the running server: create a project, list it,
 * read a report. A deliberately wrong use of the same types (a number for
 * a name, a field no project has, an undescribed path) must fail to
 * type-check, so the check can fail.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import openapiTS, { astToString } from 'openapi-typescript'
import t from 'tap'
import ts from 'typescript'
import { startInProcess } from '../helpers/server.js'

type Transport = (method: string, path: string, body?: unknown) => Promise<{ status: number; json: unknown }>

const server = await startInProcess()
t.teardown(() => server.stop())
const { client } = server
const { token } = await client.createTenant('typed')

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'timeledger-client-'))
t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))

const served = await client.request('GET', '/v1/openapi.json')
const types = astToString(await openapiTS(served.json))
fs.writeFileSync(path.join(dir, 'api.d.ts'), types)

const CLIENT = `
import type { components, paths } from './api.js'

type ProjectInput = components['schemas']['ProjectInput']
type ProjectList = paths['/time/projects']['get']['responses']['200']['content']['application/json']
type Written = paths['/time/projects']['post']['responses']['201']['content']['application/json']
type Totals = paths['/time/reports/singletotals']['get']['responses']['200']['content']['application/json']
type ApiError = components['schemas']['Error']

/** Sends a request to the tenant's /v1 (Node's fetch cannot set the Host header a tenant is named by). */
export type Transport = (method: string, path: string, body?: unknown) => Promise<{ status: number; json: unknown }>

export class TimeLedgerClient {
  constructor(private readonly send: Transport, private readonly token: string) {}

  private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const response = await this.send(method, path + (path.includes('?') ? '&' : '?') + 'token=' + encodeURIComponent(this.token), body)
    if (response.status >= 400) throw new Error((response.json as ApiError).code + ': ' + (response.json as ApiError).message)
    return response.json as T
  }

  createProject(project: ProjectInput): Promise<Written> {
    return this.call<Written>('POST', '/time/projects', project)
  }

  async projectNames(): Promise<string[]> {
    const list = await this.call<ProjectList>('GET', '/time/projects?$orderby=name')
    return list.map((project) => project.name ?? '(unnamed)')
  }

  async totalTimeMs(): Promise<number> {
    const totals = await this.call<Totals>('GET', '/time/reports/singletotals')
    return totals.time
  }
}
`

const WRONG = `
import type { components, paths } from './api.js'

export const wrongType: components['schemas']['ProjectInput'] = { name: 42 }
export function unknownField(project: components['schemas']['Project']): unknown {
  return project.colour
}
export type NoSuchPath = paths['/time/nowhere']['get']
`

/** The diagnostics of type-checking `file` (strict, as the project's own code), as text. */
function typeCheck(file: string): string[] {
  const program = ts.createProgram([file], {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    types: ['node'],
    typeRoots: [path.join(process.cwd(), 'node_modules', '@types')],
    skipLibCheck: true,
  })
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'))
}

t.test('types generated from the description', async (t) => {
  t.match(types, /export interface paths/)
  t.match(types, /"\/time\/projects": \{/)
  t.match(types, /Project: \{/)
})

t.test('a client written against them type-checks and works', async (t) => {
  const file = path.join(dir, 'client.ts')
  fs.writeFileSync(file, CLIENT)
  t.same(typeCheck(file), [], 'no type errors')
  const compiled = ts.transpileModule(CLIENT, { compilerOptions: { module: ts.ModuleKind.ES2022, target: ts.ScriptTarget.ES2022 } }).outputText
  const modulePath = path.join(dir, 'client.mjs')
  fs.writeFileSync(modulePath, compiled)
  const { TimeLedgerClient } = (await import(pathToFileURL(modulePath).href)) as {
    TimeLedgerClient: new (send: Transport, token: string) => { createProject(p: unknown): Promise<{ id: string }>; projectNames(): Promise<string[]>; totalTimeMs(): Promise<number> }
  }
  const send: Transport = async (method, target, body) => {
    const [pathPart, queryPart = ''] = target.split('?')
    const response = await client.request(method, `/v1${pathPart}`, { tenant: 'typed', query: Object.fromEntries(new URLSearchParams(queryPart)), ...(body === undefined ? {} : { body }) })
    return { status: response.status, json: response.json }
  }
  const api = new TimeLedgerClient(send, token)
  const written = await api.createProject({ name: 'Typed project', active: true })
  t.match(written.id, /^[0-9a-f-]{36}$/)
  t.same(await api.projectNames(), ['Typed project'])
  t.equal(await api.totalTimeMs(), 0)
})

t.test('a wrong use of the types does not type-check', async (t) => {
  const file = path.join(dir, 'wrong.ts')
  fs.writeFileSync(file, WRONG)
  const errors = typeCheck(file)
  t.equal(errors.length, 3, errors.join('\n'))
  t.match(errors.join('\n'), /number.*not assignable to type 'string'/s)
  t.match(errors.join('\n'), /colour/)
  t.match(errors.join('\n'), /\/time\/nowhere/)
})
