/*
 * `npm run lint`'s two checks refuse what they are for: the layer rules of
 * .dependency-cruiser.cjs (run on small trees written here, so a rule that
 * matched nothing would show), and the comment-path check (missingNames on
 * made-up files).
 */
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import t, { type Test } from 'tap'
import { missingNames } from '../../../scripts/commentPaths.js'

const ROOT = path.resolve(import.meta.dirname, '..', '..', '..')
const DEPCRUISE = path.join(ROOT, 'node_modules', '.bin', 'depcruise')

/** Writes `files` into a new folder with a tsconfig.json and runs the project's layer rules on its src/. */
async function cruise(t: Test, files: Record<string, string>): Promise<{ failed: boolean; output: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'timeledger-layers-'))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext' } }))
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true })
    fs.writeFileSync(path.join(dir, name), text)
  }
  try {
    const { stdout } = await promisify(execFile)(DEPCRUISE, ['src', '--config', path.join(ROOT, '.dependency-cruiser.cjs')], { cwd: dir })
    return { failed: false, output: stdout }
  } catch (error) {
    return { failed: true, output: String((error as { stdout?: string }).stdout) }
  }
}

t.test('the layer rules pass a tree that keeps them and name each rule a tree breaks', async (t) => {
  const kept = await cruise(t, {
    'src/assert.ts': 'export const ok = 1\n',
    'src/engine/state.ts': "import { ok } from '../assert.js'\nexport const state = ok\n",
    'src/tenants/actor.ts': "import { state } from '../engine/state.js'\nexport const actor = state\n",
    'src/http/route.ts': "import type { actor } from '../tenants/actor.js'\nexport type Route = typeof actor\n",
  })
  t.equal(kept.failed, false, kept.output)

  const broken = await cruise(t, {
    'src/assert.ts': "import { state } from './engine/state.js'\nexport const ok = state\n",
    'src/engine/state.ts': "import type { Actor } from '../tenants/actor.js'\nexport const state = 1\nexport type S = Actor\n",
    'src/tenants/actor.ts': 'export type Actor = 1\n',
    'src/http/route.ts': "import { log } from '../persist/embeddedStorage.js'\nexport const route = log\n",
    'src/persist/embeddedStorage.ts': 'export const log = 1\n',
    'src/domain/a.ts': "import { b } from './b.js'\nexport const a = b\n",
    'src/domain/b.ts': "import { a } from './a.js'\nexport const b = () => a\n",
  })
  t.equal(broken.failed, true)
  for (const rule of ['bottom-imports-nothing', 'engine-is-the-deterministic-core', 'http-above-tenants-only', 'no-circular']) {
    t.match(broken.output, rule, `names ${rule}`)
  }
  t.match(broken.output, 'src/engine/state.ts → src/tenants/actor.ts', 'a type-only import counts')
})

t.test('http/ may not import the engine, not even a type; the domain view is what it reads', async (t) => {
  const tree = {
    'src/engine/state.ts': "import type { View } from '../domain/tx.js'\nexport class State implements View { seq = 0 }\n",
    'src/domain/tx.ts': 'export interface View { readonly seq: number }\n',
  }
  const kept = await cruise(t, { ...tree, 'src/http/route.ts': "import type { View } from '../domain/tx.js'\nexport const seqOf = (view: View) => view.seq\n" })
  t.equal(kept.failed, false, kept.output)
  const broken = await cruise(t, { ...tree, 'src/http/route.ts': "import type { State } from '../engine/state.js'\nexport const seqOf = (state: State) => state.seq\n" })
  t.equal(broken.failed, true)
  t.match(broken.output, 'http-never-sees-the-engine')
  t.match(broken.output, 'src/http/route.ts → src/engine/state.ts')
})

t.test('a comment may name only files that exist', async (t) => {
  const known = ['src/tenants/tenantActor.ts', 'src/http/routes/batch.ts', 'bench/guard.ts', 'README.md']
  // Block comments made at run time: written here as they are, the check would read them as this file's own.
  const block = (text: string) => `/${'*'} ${text} ${'*'}/`
  const comments: Record<string, string> = {
    'src/http/server.ts': [
      block('the actor (tenants/tenantActor.ts), batches (routes/batch.ts), tenantActor.js, README.md'),
      '// run as node dist/bench/guard.js; uWebSockets.js answers',
      "const url = 'http://x/y.js' // not a comment's name: http://host/a.ts",
      block('gone: tenants/registry.ts, and oldName.ts'),
    ].join('\n'),
  }
  const missing = missingNames(Object.keys(comments), (file) => comments[file] ?? '', known, ['uWebSockets.js'])
  t.same(
    missing.map(({ line, name }) => `${line} ${name}`),
    ['4 tenants/registry.ts', '4 oldName.ts'],
  )
})
