/*
 * The README's own request bodies type-check against the types a client
 * generates from the served description with the README's own command
 * (issue 38): every `curl … -d '<json>'` of README.md is found (the test
 * reads the README, so it follows it), matched to its operation in
 * /v1/openapi.json by method and path, and written into a small client as
 * a value of that operation's request body type; the types are made by the
 * `npx openapi-typescript …` line of the README, run against this server,
 * and the client is type-checked strictly (the TypeScript compiler, as
 * tsc). A body naming a field no schema has, or leaving out one the types
 * require (a field with a default, once generated as required), fails.
 */
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import t from 'tap'
import ts from 'typescript'
import { REPO_ROOT, startInProcess } from '../helpers/server.js'

const run = promisify(execFile)

/** A curl of the README that sends a body. */
interface ReadmeCall {
  readonly line: number
  readonly method: string
  readonly url: string
  readonly contentType: string
  readonly body: string
}

/** The lines of the README's shell blocks, each command with its continuation lines joined, and where it starts. */
function shellCommands(readme: string): { line: number; text: string }[] {
  const commands: { line: number; text: string }[] = []
  let inShell = false
  let pending: { line: number; text: string } | null = null
  readme.split('\n').forEach((raw, index) => {
    const line = raw.trim()
    if (line.startsWith('```')) {
      inShell = !inShell && /^```(?:sh|bash|shell)\b/.test(line)
      return
    }
    if (!inShell) return
    const text = line.endsWith('\\') ? line.slice(0, -1) : line
    pending = pending === null ? { line: index + 1, text } : { line: pending.line, text: `${pending.text} ${text}` }
    if (!line.endsWith('\\')) {
      commands.push(pending)
      pending = null
    }
  })
  return commands
}

/** Shell words from `text` on, as far as the command goes (an unquoted `|`, `)`, `;` or `&` ends it); quotes removed. */
function shellWords(text: string): string[] {
  const words: string[] = []
  let word: string | null = null
  for (let index = 0; index < text.length; index += 1) {
    const char = text[index] as string
    if (char === "'" || char === '"') {
      const end = text.indexOf(char, index + 1)
      if (end < 0) throw new Error(`unterminated ${char} in: ${text}`)
      word = (word ?? '') + text.slice(index + 1, end)
      index = end
    } else if (char === '\\' && index + 1 < text.length) {
      word = (word ?? '') + text[index + 1]
      index += 1
    } else if (/\s/.test(char)) {
      if (word !== null) words.push(word)
      word = null
    } else if ('|);&'.includes(char)) break
    else word = (word ?? '') + char
  }
  if (word !== null) words.push(word)
  return words
}

function readmeCalls(readme: string): ReadmeCall[] {
  const calls: ReadmeCall[] = []
  for (const command of shellCommands(readme)) {
    for (let at = command.text.indexOf('curl '); at >= 0; at = command.text.indexOf('curl ', at + 5)) {
      const words = shellWords(command.text.slice(at + 5))
      let method: string | null = null
      let body: string | null = null
      let contentType = 'application/json'
      let url: string | null = null
      for (let index = 0; index < words.length; index += 1) {
        const word = words[index] as string
        const next = words[index + 1] ?? ''
        if (word === '-X' || word === '--request') method = next
        else if (word === '-d' || word === '--data' || word === '--data-raw') body = next
        else if ((word === '-H' || word === '--header') && /^content-type:/i.test(next)) contentType = next.slice(next.indexOf(':') + 1).trim()
        else if (/^https?:\/\//.test(word)) url = word
        if (['-X', '--request', '-d', '--data', '--data-raw', '-H', '--header', '-u'].includes(word)) index += 1
      }
      if (body !== null && url !== null) calls.push({ line: command.line, method: (method ?? 'POST').toUpperCase(), url, contentType, body })
    }
  }
  return calls
}

/** The path of the description that `url` calls (its part after /v1, shell variables as path parameters). */
function documentedPath(url: string, documented: readonly string[]): string | undefined {
  const afterVersion = /\/v1(\/[^?#]*)/.exec(url)?.[1] ?? ''
  const segments = afterVersion.split('/').filter((segment) => segment !== '')
  let best: { path: string; literals: number } | undefined
  for (const candidate of documented) {
    const parts = candidate.split('/').filter((part) => part !== '')
    if (parts.length !== segments.length) continue
    let literals = 0
    const fits = parts.every((part, index) => {
      const segment = segments[index] as string
      if (part.startsWith('{')) return true
      literals += 1
      return part === segment
    })
    if (fits && (best === undefined || literals > best.literals)) best = { path: candidate, literals }
  }
  return best?.path
}

const server = await startInProcess()
t.teardown(() => server.stop())
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'timeledger-readme-'))
t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))

const readme = fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8')
const calls = readmeCalls(readme)
const doc = (await server.client.request('GET', '/v1/openapi.json')).json as { paths: Record<string, Record<string, { requestBody?: { content: Record<string, unknown> } }>> }

t.test('the README shows bodies, and each is JSON for an operation the description has', async (t) => {
  const shown = calls.map((call) => `${call.method} ${documentedPath(call.url, Object.keys(doc.paths)) ?? call.url}`)
  for (const expected of ['POST /register/signup', 'POST /time/projects', 'POST /time/timerecords', 'POST /time/impulses', 'PATCH /time/projects/{id}', 'POST /webhooks']) {
    t.ok(shown.includes(expected), `the README shows ${expected}`)
  }
  for (const call of calls) {
    const where = `README.md:${call.line} ${call.method} ${call.url}`
    t.doesNotThrow(() => JSON.parse(call.body), `${where}: the body is JSON`)
    const documented = documentedPath(call.url, Object.keys(doc.paths))
    t.ok(documented !== undefined && doc.paths[documented]?.[call.method.toLowerCase()]?.requestBody?.content[call.contentType] !== undefined, `${where}: described with a ${call.contentType} body`)
  }
})

t.test("the types the README's command generates take every body the README sends", async (t) => {
  const command = /`(npx openapi-typescript [^`]+)`/.exec(readme)?.[1]
  if (command === undefined) throw new Error('the README shows no openapi-typescript command')
  const [, tool, ...args] = command.split(/\s+/)
  t.equal(tool, 'openapi-typescript')
  const typesFile = path.join(dir, 'timeledger.d.ts')
  const localArgs = args.map((arg) =>
    arg.startsWith('http://localhost:8080/') ? arg.replace('http://localhost:8080', `http://localhost:${server.client.port}`) : arg.endsWith('.d.ts') ? typesFile : arg,
  )
  await run(path.join(REPO_ROOT, 'node_modules', '.bin', 'openapi-typescript'), localArgs, { cwd: dir })
  t.ok(fs.existsSync(typesFile), 'the types were written')

  const lines = ["import type { paths } from './timeledger.js'", '']
  calls.forEach((call, index) => {
    const documented = documentedPath(call.url, Object.keys(doc.paths)) as string
    const type = `NonNullable<paths[${JSON.stringify(documented)}][${JSON.stringify(call.method.toLowerCase())}]['requestBody']>['content'][${JSON.stringify(call.contentType)}]`
    lines.push(`// README.md:${call.line}`, `export const body${index}: ${type} = ${call.body}`)
  })
  const clientFile = path.join(dir, 'readmeBodies.ts')
  fs.writeFileSync(clientFile, `${lines.join('\n')}\n`)
  const program = ts.createProgram([clientFile], {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    skipLibCheck: true,
    types: [],
  })
  const errors = ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const where =
      diagnostic.file === undefined || diagnostic.start === undefined ? '' : `${path.basename(diagnostic.file.fileName)}:${diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start).line + 1} `
    return `${where}${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`
  })
  t.same(errors, [], `every README body type-checks (${calls.length} bodies)`)
})
