/*
 * The system programs some tests need, named by the Debian package that
 * brings them: PostgreSQL (`postgresql`: initdb, pg_ctl and pg_basebackup
 * under /usr/lib/postgresql/<version>/bin), HAProxy (`haproxy`), Chromium
 * (`chromium`) and curl (`curl`), each looked up where the tests run it
 * from: PATH and the sbin folders (haproxy is /usr/sbin/haproxy, which a
 * user's PATH often lacks), or PostgreSQL's Debian directory.
 *
 * Every test that needs one asks here first, so a machine without them
 * gets an explanation, not failures:
 *
 *   import t from 'tap'
 *   if (installed(t, ['postgresql', 'haproxy'])) {
 *     … the file's tests …
 *   }
 *
 * When a package is missing, `installed` ends the file at once with one
 * line naming the package and how to install it (`t.plan(0, reason)`: tap
 * reports the file as skipped, with that reason) and answers false. With
 * CI set (`.ci/run` exports CI=1, and most CI services set it) a missing
 * package fails the file instead: CI installs them all, so one missing
 * means CI is broken and must not pass quietly. `npm test`'s runner
 * (scripts/runTests.ts) asks the same for its cluster stage.
 *
 * TIMELEDGER_TEST_MISSING=postgresql,haproxy (a comma-separated list)
 * makes this helper treat those packages as missing although they are
 * installed: to see what a machine without them sees, and for the
 * helper's own test. Only the tests read it.
 */
import fs from 'node:fs'
import path from 'node:path'
import { postgresBinDir } from '../../src/cluster/localPostgres.js'

const SYSTEM_PACKAGES = ['postgresql', 'haproxy', 'chromium', 'curl'] as const
export type SystemPackage = (typeof SYSTEM_PACKAGES)[number]

/** The environment variable naming packages to treat as missing. */
export const PRETEND_MISSING_ENV = 'TIMELEDGER_TEST_MISSING'

/** The PostgreSQL programs the tests run (postgresServer.ts, cluster/localPostgres.ts). */
const POSTGRES_PROGRAMS = ['initdb', 'pg_ctl', 'pg_basebackup']

function executable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK)
    return fs.statSync(file).isFile()
  } catch {
    return false
  }
}

/** Where Debian puts programs for the administrator, which a user's PATH often lacks (haproxy is /usr/sbin/haproxy). */
const SBIN_DIRS = ['/usr/local/sbin', '/usr/sbin', '/sbin']

/** The full path of a program on PATH (or in the sbin folders), or null. */
function programPath(program: string, searchPath = process.env.PATH ?? ''): string | null {
  for (const dir of [...searchPath.split(path.delimiter), ...SBIN_DIRS]) {
    if (dir === '') continue
    const file = path.join(dir, program)
    if (executable(file)) return file
  }
  return null
}

function present(pkg: SystemPackage): boolean {
  switch (pkg) {
    case 'postgresql': {
      let binDir: string
      try {
        binDir = postgresBinDir()
      } catch {
        return false
      }
      return POSTGRES_PROGRAMS.every((program) => executable(path.join(binDir, program)))
    }
    case 'haproxy':
    case 'chromium':
    case 'curl':
      return programPath(pkg) !== null
  }
}

/** The packages TIMELEDGER_TEST_MISSING names (unknown names are refused: a typo would hide nothing). */
function pretendedMissing(): Set<string> {
  const names = (process.env[PRETEND_MISSING_ENV] ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '')
  for (const name of names) {
    if (!(SYSTEM_PACKAGES as readonly string[]).includes(name)) throw new Error(`${PRETEND_MISSING_ENV} names '${name}'; it takes ${SYSTEM_PACKAGES.join(', ')}`)
  }
  return new Set(names)
}

/** Which of `packages` are not installed here (in the order given). */
export function missingPackages(packages: readonly SystemPackage[]): SystemPackage[] {
  const pretended = pretendedMissing()
  return packages.filter((pkg) => pretended.has(pkg) || !present(pkg))
}

/** Whether CI is set: a missing package is then a failure, not a skip. */
export function inCI(env: NodeJS.ProcessEnv = process.env): boolean {
  const value = (env.CI ?? '').trim().toLowerCase()
  return value !== '' && value !== '0' && value !== 'false'
}

/** One line naming the missing packages and how to get them. */
export function missingLine(missing: readonly SystemPackage[]): string {
  const names = missing.length === 1 ? `the Debian package ${missing[0]}, which is` : `the Debian packages ${missing.join(' and ')}, which are`
  return `needs ${names} not installed here (apt-get install ${missing.join(' ')})`
}

/** What a test file's root test is asked for here (tap's `t`). */
export interface RootTest {
  plan(count: number, comment?: string): void
  fail(message: string): void
}

/**
 * True when every package is installed. Otherwise the file ends here: skipped with one line naming the packages, or
 * with CI set, failed with that line; the caller registers nothing more.
 */
export function installed(t: RootTest, packages: readonly SystemPackage[]): boolean {
  const missing = missingPackages(packages)
  if (missing.length === 0) return true
  const line = missingLine(missing)
  if (inCI()) t.fail(`${line}; CI is set, so this fails instead of skipping`)
  else t.plan(0, `skipped: ${line}`)
  return false
}

/** For helpers that start such a program on a test's behalf: throws the same line when a package is missing. */
export function assertInstalled(packages: readonly SystemPackage[]): void {
  const missing = missingPackages(packages)
  if (missing.length > 0) throw new Error(missingLine(missing))
}

/** The program of an installed package, as the tests start it (haproxy, chromium, curl). */
export function installedProgram(pkg: 'haproxy' | 'chromium' | 'curl'): string {
  const file = missingPackages([pkg]).length === 0 ? programPath(pkg) : null
  if (file === null) throw new Error(missingLine([pkg]))
  return file
}
