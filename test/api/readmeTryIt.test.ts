/*
 * The README's "Try it", pasted as a reader pastes it: the service started
 * as `npm start` does (the compiled CLI's serve, in an empty folder, data
 * in ./data, no API_KEYS: it makes data/api-key), then the section's shell
 * block run by bash as written, only port 8080 replaced by a free one. The
 * sign-up's id must reach the confirmation (it was a literal `<account id>`),
 * the login must give a token, and the project must be listed; after
 * kill -9 and a new start it is still there, as the section says.
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { freePort } from '../helpers/freePort.js'
import { REPO_ROOT, tempDataDir } from '../helpers/server.js'
import { installed } from '../helpers/systemPrograms.js'

/** The shell blocks of the README section under `heading`, in order. */
function shellBlocks(heading: string): string[] {
  const readme = fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8')
  const start = readme.indexOf(`\n${heading}\n`)
  if (start < 0) throw new Error(`README has no section '${heading}'`)
  const end = readme.indexOf('\n## ', start + heading.length + 2)
  const section = readme.slice(start, end < 0 ? undefined : end)
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1] as string)
}

/** `npm start` in `cwd`: the compiled service with the README's defaults (port aside); resolves once it listens. */
function startAsNpmStart(cwd: string, port: number): Promise<{ child: ChildProcess; output: () => string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), ADMIN_PORT: '0', PASSWORD_HASH_MEMORY_KIB: '1024', PASSWORD_HASH_PASSES: '1' }
  for (const name of ['API_KEYS', 'DATA_DIR', 'HOST', 'BASE_DOMAIN', 'ADMIN_KEY']) delete env[name]
  const child = spawn(process.execPath, [path.join(REPO_ROOT, 'dist', 'src', 'cli.js'), 'serve'], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()))
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()))
  return new Promise((resolve, reject) => {
    const deadline = setTimeout(() => reject(new Error(`the service did not start:\n${output}`)), 60_000)
    const poll = setInterval(() => {
      if (/listening on http:\/\//.test(output)) {
        clearInterval(poll)
        clearTimeout(deadline)
        resolve({ child, output: () => output })
      } else if (child.exitCode !== null) {
        clearInterval(poll)
        clearTimeout(deadline)
        reject(new Error(`the service exited:\n${output}`))
      }
    }, 50)
  })
}

function bash(script: string, cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('bash', ['-e', '-c', script], { cwd, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, stdout, stderr })
    })
  })
}

if (installed(t, ['curl'])) {
  t.test("the README's Try it, pasted into bash against the service", async (t) => {
    const [start = '', session = '', ...rest] = shellBlocks('## Try it')
    t.equal(rest.length, 0, 'two shell blocks: the start, then the session')
    t.match(start, /^npm start +#/, 'the first starts the service with npm start')
    t.match(session, /^KEY=\$\(cat data\/api-key\)\n/, 'the second begins with the API key the service made')
    const commands = session.split('\n').filter((line) => !line.trimStart().startsWith('#'))
    t.notMatch(commands.join('\n'), /<[a-z ]+>/, 'no command holds a placeholder to fill in by hand')

    const folder = tempDataDir('readme')
    const port = await freePort()
    let server = await startAsNpmStart(folder, port)
    t.teardown(() => server.child.kill('SIGKILL'))
    t.match(server.output(), /Generated API key \(kept in .*data\/api-key\)/, 'the key is made on the first start')

    const pasted = session.replaceAll('localhost:8080', `localhost:${port}`)
    t.not(pasted, session, 'the commands name port 8080, replaced here by the test port')
    const run = await bash(`${pasted}\necho\necho "TOKEN=$TOKEN"`, folder)
    t.equal(run.code, 0, `bash ran every command${run.code === 0 ? '' : `: ${run.stderr}`}`)
    const lines = run.stdout.split('\n')
    t.match(run.stdout, /"urlPrefix":"acme".*"confirmed":true/, 'the confirmation with the captured id confirmed the account')
    t.match(run.stdout, /\{"id":"[0-9a-f-]{36}","version":1\}/, 'the project was created')
    t.match(run.stdout, /\[\{"id":"[0-9a-f-]{36}",.*"name":"Apollo"/, 'and is listed')
    const token = lines.find((line) => line.startsWith('TOKEN='))?.slice('TOKEN='.length) ?? ''
    t.match(token, /^[\w-]{20,}$/, 'the login gave a token')

    server.child.kill('SIGKILL')
    await new Promise((resolve) => server.child.once('exit', resolve))
    server = await startAsNpmStart(folder, port)
    const listLine =
      session
        .split('\n')
        .filter((line) => line.startsWith('curl -s "http://acme.localhost:8080/v1/time/projects?'))
        .at(-1) ?? ''
    t.match(listLine, /\$orderby=name/, "the section's list command")
    const after = await bash(`TOKEN='${token}'\n${listLine.replaceAll('localhost:8080', `localhost:${port}`)}`, folder)
    t.match(after.stdout, /^\[\{"id":"[0-9a-f-]{36}",.*"name":"Apollo"/, 'after kill -9 and a new start the project is still there')
  })
}
