/*
 * Every file a comment names exists. Comments here say where the rest of a
 * mechanism lives ("the barrier, tenants/durabilityBarrier.ts"); a rename
 * that forgets them leaves a reader looking for a file that is gone. This
 * reads the comments of every TypeScript file of src/, test/, bench/ and
 * scripts/, takes each word that looks like a project file (a name ending
 * in .ts, .js, .ohm, .md, .json or .cjs), and looks for it:
 *
 *   * a path with a slash: relative to the commenting file, to src/ or to
 *     the repository, or as the end of some file's path
 *     (`routes/batch.ts` from anywhere);
 *   * a bare name: some file of the repository has that name.
 *
 * A `.js` name also matches its `.ts` source (imports and commands name the
 * compiled file, `dist/bench/guard.js` is `bench/guard.ts`). Names that are not our
 * files (a dependency such as uWebSockets.js, a file a program writes) are
 * listed once in `NOT_OURS`, with why. Run by `npm run lint`.
 */
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

/** The repository's root, whether this runs compiled (dist/scripts/) or from its source. */
const HERE = path.dirname(fileURLToPath(import.meta.url))
const ROOT = path.basename(path.dirname(HERE)) === 'dist' ? path.resolve(HERE, '..', '..') : path.resolve(HERE, '..')

const SCANNED_DIRS = ['src', 'test', 'bench', 'scripts'] as const
const SKIPPED_DIRS = new Set(['node_modules', 'dist', 'fixtures', '.git'])
/** Words that look like a file of ours but are not one, each with why. */
const NOT_OURS: ReadonlyMap<string, string> = new Map([
  ['openapi.json', 'the address /v1/openapi.json the service answers'],
  ['fixture.json', 'a file bench/fixture.ts writes'],
  ['swagger-ui-bundle.js', "swagger-ui-dist's script, served by /docs"],
  ['interface.md', "the API's specification, which the repository does not hold (README.md is its client's account)"],
  ['resources.md', "the API's specification of the resources, outside the repository like interface.md"],
])

const FILE_WORD = /(?<![\w@:/.-])((?:[\w.-]+\/)*[\w.-]*\w\.(?:ts|js|ohm|md|json|cjs))(?![\w/-])/g
const COMMENT = /\/\*[\s\S]*?\*\/|(?<![:'"`\\])\/\/[^\n]*/g

function walk(dir: string, into: string[]): string[] {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (SKIPPED_DIRS.has(entry.name)) continue
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) walk(full, into)
    else into.push(path.relative(ROOT, full).split(path.sep).join('/'))
  }
  return into
}

export interface MissingName {
  readonly file: string
  readonly line: number
  readonly name: string
}

/** Every file name the comments of `files` mention that names no file of `known`. */
export function missingNames(files: readonly string[], read: (file: string) => string, known: readonly string[], packages: readonly string[]): MissingName[] {
  const paths = new Set(known)
  const baseNames = new Set(known.map((file) => path.posix.basename(file)))
  const exists = (name: string, from: string): boolean => {
    const source = name.startsWith('dist/') ? name.slice('dist/'.length) : name
    const candidates = source.endsWith('.js') ? [source, `${source.slice(0, -3)}.ts`] : [source]
    return candidates.some((candidate) => {
      if (!candidate.includes('/')) return baseNames.has(candidate)
      const relative = [path.posix.join(path.posix.dirname(from), candidate), path.posix.join('src', candidate), path.posix.normalize(candidate)]
      return relative.some((option) => paths.has(option)) || known.some((file) => file.endsWith(`/${candidate}`))
    })
  }
  const missing: MissingName[] = []
  for (const file of files) {
    const text = read(file)
    for (const comment of text.matchAll(COMMENT)) {
      for (const word of comment[0].matchAll(FILE_WORD)) {
        const name = word[1]
        if (name === undefined || NOT_OURS.has(name) || packages.includes(name) || exists(name, file)) continue
        const at = comment.index + word.index
        missing.push({ file, line: text.slice(0, at).split('\n').length, name })
      }
    }
  }
  return missing
}

function main(): void {
  const known = walk(ROOT, [])
  const scanned = SCANNED_DIRS.flatMap((dir) => walk(path.join(ROOT, dir), [])).filter((file) => file.endsWith('.ts'))
  const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { dependencies: object; devDependencies: object }
  const packages = [...Object.keys(manifest.dependencies), ...Object.keys(manifest.devDependencies)]
  const missing = missingNames(scanned, (file) => fs.readFileSync(path.join(ROOT, file), 'utf8'), known, packages)
  for (const { file, line, name } of missing) console.error(`${file}:${line}: a comment names ${name}, which does not exist`)
  if (missing.length > 0) {
    console.error(`${missing.length} comment(s) name files that do not exist`)
    process.exit(1)
  }
  console.log(`comments name only files that exist (${scanned.length} files read)`)
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) main()
