/*
 * The cluster parity suite is the list of files that declare themselves
 * (scripts/paritySuite.ts): a call of inClusterParitySuite() alone on a
 * line at a file's top level, in a test file under test/; not its mention
 * in a comment, a string or a function body, not a helper that is no test.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import t from 'tap'
import { paritySuiteFiles } from '../../../scripts/paritySuite.js'

const IMPORT = "import { inClusterParitySuite } from '../helpers/paritySuite.js'\n"

t.test('the files that declare themselves, and only those', async (t) => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'timeledger-parity-'))
  t.teardown(() => fs.rmSync(root, { recursive: true, force: true }))
  const files: Record<string, string> = {
    'test/api/member.test.ts': `import t from 'tap'\n${IMPORT}\ninClusterParitySuite()\n\nt.pass('x')\n`,
    'test/cluster/deep/member.test.ts': `${IMPORT}inClusterParitySuite()   \n`,
    'test/api/commented.test.ts': `/*\n * inClusterParitySuite()\n */\n// inClusterParitySuite()\n`,
    'test/api/quoted.test.ts': 'const text = `\ninClusterParitySuite() is the call`\n',
    'test/api/nested.test.ts': `${IMPORT}function later() {\n  inClusterParitySuite()\n}\n`,
    'test/api/imported.test.ts': IMPORT,
    'test/helpers/notATest.ts': `${IMPORT}inClusterParitySuite()\n`,
  }
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, name)), { recursive: true })
    fs.writeFileSync(path.join(root, name), text)
  }
  t.same(paritySuiteFiles(root), ['test/api/member.test.ts', 'test/cluster/deep/member.test.ts'])
})

t.test('in this repository: HTTP suites and the cluster fault test, each importing the declaration', async (t) => {
  const root = path.resolve(import.meta.dirname, '..', '..', '..')
  const found = paritySuiteFiles(root)
  t.ok(found.includes('test/cluster/nemesis.test.ts'), 'the fault test')
  t.ok(found.includes('test/api/resourcesCrud.test.ts'), 'an HTTP suite')
  for (const file of found) t.match(fs.readFileSync(path.join(root, file), 'utf8'), /import \{ inClusterParitySuite \} from '\.\.\/helpers\/paritySuite\.js'/, file)
})
