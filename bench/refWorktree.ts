/*
 * Another commit of this repository, built beside this checkout for an A/B
 * (the guard, guard.ts): `git worktree add --detach` into a temporary
 * folder, its dependencies, and its compiled dist/.
 *
 * Dependencies: when the commit's package-lock.json is byte for byte this
 * checkout's, its node_modules is a symlink to ours (the same packages; a
 * second `npm ci` would take a minute or more on a loaded 2-core machine);
 * otherwise the worktree runs its own `npm ci`, whose `prepare` compiles
 * it. With the symlink, the commit is compiled by its own tsc (the same
 * version, the lock being the same) with this checkout's
 * bench/tsconfig.guard.json, copied in: only src/ and bench/ (test/ is not
 * needed to serve and to generate data) and no type check (the emitted
 * JavaScript is the same; checking is the commit's own business), which
 * takes a third of the time of `tsc -p .` (40 s instead of 107 s at a load
 * average of 20). The patches `postinstall` applies to node_modules are then
 * ours; they touch only the PostgreSQL client, which no hot path uses.
 *
 * remove() is synchronous, so a signal handler can call it: it unlinks the
 * node_modules symlink first (nothing may ever walk into our own
 * node_modules), then `git worktree remove --force`, then removes what is
 * left. Children it started (npm, tsc, the generator) are killed by
 * stopChildren().
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

/** dist/bench/refWorktree.js → this checkout's root. */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url))

export interface RefBuild {
  ref: string
  /** The full commit id the ref named. */
  commit: string
  /** The temporary worktree. */
  dir: string
  /** Its compiled CLI (dist/src/cli.js). */
  cli: string
  nodeModules: 'linked' | 'installed'
  buildMs: number
}

/** The commit `ref` names in this repository; throws with git's message when it names none. */
export function resolveCommit(ref: string): string {
  try {
    return execFileSync('git', ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`], { cwd: REPO_ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim()
  } catch {
    throw new Error(`'${ref}' names no commit of this repository (git rev-parse)`)
  }
}

/** The compile the guard asks of both builds (see above). */
export const GUARD_TSCONFIG = path.join('bench', 'tsconfig.guard.json')

export class RefWorktree {
  private readonly children = new Set<ChildProcess>()
  private removed = false

  private constructor(
    readonly ref: string,
    readonly commit: string,
    readonly dir: string,
  ) {}

  /** Checks `ref` out into a new temporary worktree (nothing built yet). */
  static add(ref: string): RefWorktree {
    const commit = resolveCommit(ref)
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `timeledger-guard-${commit.slice(0, 7)}-`))
    const worktree = new RefWorktree(ref, commit, dir)
    try {
      execFileSync('git', ['worktree', 'add', '--detach', dir, commit], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
    } catch (error) {
      worktree.remove()
      throw new Error(`git worktree add ${dir} ${commit}: ${error instanceof Error ? error.message : String(error)}`)
    }
    return worktree
  }

  /** Dependencies and dist/; `log` gets a line per step. */
  async build(log: (line: string) => void): Promise<RefBuild> {
    const started = performance.now()
    const sameLock = fs.readFileSync(path.join(REPO_ROOT, 'package-lock.json')).equals(fs.readFileSync(path.join(this.dir, 'package-lock.json')))
    if (sameLock) {
      fs.symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(this.dir, 'node_modules'), 'dir')
      fs.copyFileSync(path.join(REPO_ROOT, GUARD_TSCONFIG), path.join(this.dir, GUARD_TSCONFIG))
      log(`${this.label()}: same package-lock.json, node_modules linked; compiling src/ and bench/ (${GUARD_TSCONFIG}) …`)
      const tsc = path.join(this.dir, 'node_modules', 'typescript', 'bin', 'tsc')
      // tsc writes dist/ even when it reports type errors; the outputs are checked below.
      const { code, output } = await this.run(process.execPath, [tsc, '-p', GUARD_TSCONFIG])
      if (code !== 0) log(`${this.label()}: tsc exited with ${code} (its outputs are used if present):\n${output.split('\n').slice(0, 10).join('\n')}`)
    } else {
      log(`${this.label()}: package-lock.json differs from this checkout's; npm ci in the worktree (it compiles too) …`)
      const { code, output } = await this.run('npm', ['ci', '--no-audit', '--no-fund'])
      if (code !== 0) throw new Error(`npm ci in ${this.dir} exited with ${code}:\n${output.slice(-4000)}`)
    }
    const cli = path.join(this.dir, 'dist', 'src', 'cli.js')
    for (const file of [cli, this.generator()]) if (!fs.existsSync(file)) throw new Error(`the build of ${this.label()} has no ${path.relative(this.dir, file)}`)
    return { ref: this.ref, commit: this.commit, dir: this.dir, cli, nodeModules: sameLock ? 'linked' : 'installed', buildMs: performance.now() - started }
  }

  /** The ref's own fixture generator, compiled. */
  generator(): string {
    return path.join(this.dir, 'dist', 'bench', 'generate.js')
  }

  /** Runs `command` in the worktree; its exit code and what it printed. Killed by stopChildren(). */
  run(command: string, args: readonly string[]): Promise<{ code: number; output: string }> {
    return new Promise((resolve, reject) => {
      const child = spawn(command, args, { cwd: this.dir, stdio: ['ignore', 'pipe', 'pipe'] })
      this.children.add(child)
      let output = ''
      child.stdout.setEncoding('utf8').on('data', (text: string) => (output += text))
      child.stderr.setEncoding('utf8').on('data', (text: string) => (output += text))
      child.once('error', (error) => {
        this.children.delete(child)
        reject(error)
      })
      child.once('close', (code, signal) => {
        this.children.delete(child)
        resolve({ code: code ?? (signal === null ? 1 : 128), output })
      })
    })
  }

  stopChildren(): void {
    for (const child of this.children) child.kill('SIGKILL')
  }

  label(): string {
    return `${this.ref} (${this.commit.slice(0, 7)})`
  }

  /** Removes the worktree and everything in it; safe to call twice and from a signal handler. */
  remove(): void {
    if (this.removed) return
    this.removed = true
    this.stopChildren()
    const link = path.join(this.dir, 'node_modules')
    if (fs.lstatSync(link, { throwIfNoEntry: false })?.isSymbolicLink() === true) fs.unlinkSync(link)
    try {
      execFileSync('git', ['worktree', 'remove', '--force', this.dir], { cwd: REPO_ROOT, stdio: 'ignore' })
    } catch {
      // Not registered (add failed) or already gone: the folder is removed below either way.
    }
    fs.rmSync(this.dir, { recursive: true, force: true })
  }
}
