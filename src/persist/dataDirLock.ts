/*
 * One server per data directory: `server.lock` holds the pid of the server
 * that uses it. A lock whose process is gone (after kill -9) is stale and
 * taken over. Operator commands that change the data (restore, snapshot)
 * refuse while a live server holds the lock.
 *
 * Gone includes a zombie: a process killed with -9 stays in the process
 * table (state Z in /proc/<pid>/stat) until its parent reaps it, and
 * signal 0 still reaches it. Its pid would block a restart for as long as
 * the parent (a supervisor, a test harness) takes to collect it, so a
 * zombie counts as gone: it can never touch the data again.
 */
import fs from 'node:fs'
import path from 'node:path'
import { makePrivateDir, PRIVATE_FILE_MODE } from './privateFiles.js'

function lockPath(dataDir: string): string {
  return path.join(dataDir, 'server.lock')
}

/**
 * The state letter of a process as /proc/<pid>/stat gives it (R, S, D, Z, X…), or null when it cannot be read
 * (no such process, or no /proc). The command name in parentheses may itself hold ') ', so the state is the
 * first field after the last ')'.
 */
export function processState(pid: number, procDir = '/proc'): string | null {
  let stat: string
  try {
    stat = fs.readFileSync(path.join(procDir, String(pid), 'stat'), 'utf8')
  } catch {
    return null
  }
  const afterName = stat.lastIndexOf(')')
  const state = afterName < 0 ? undefined : stat.slice(afterName + 1).trim().split(' ')[0]
  return state === undefined || state === '' ? null : state
}

/** A zombie (Z) or a process being torn down (X) has ended: only its entry in the process table is left. */
function hasEnded(state: string | null): boolean {
  return state === 'Z' || state === 'X'
}

/** Whether a process with that pid runs (one this user may not signal counts as running; a zombie does not). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false
  }
  return !hasEnded(processState(pid))
}

/** The pid of a live server holding the directory, or null. */
export function lockHolder(dataDir: string): number | null {
  try {
    const pid = Number(fs.readFileSync(lockPath(dataDir), 'utf8').trim())
    return Number.isSafeInteger(pid) && pid > 0 && pid !== process.pid && isAlive(pid) ? pid : null
  } catch {
    return null
  }
}

export function acquireLock(dataDir: string): void {
  makePrivateDir(dataDir)
  const holder = lockHolder(dataDir)
  if (holder !== null) throw new Error(`the data directory ${dataDir} is in use by the server with pid ${holder}`)
  fs.writeFileSync(lockPath(dataDir), String(process.pid), { mode: PRIVATE_FILE_MODE })
  fs.chmodSync(lockPath(dataDir), PRIVATE_FILE_MODE)
}

export function releaseLock(dataDir: string): void {
  try {
    if (fs.readFileSync(lockPath(dataDir), 'utf8').trim() === String(process.pid)) fs.rmSync(lockPath(dataDir))
  } catch {
    // already gone
  }
}

export function refuseWhileServing(dataDir: string, what: string): void {
  const holder = lockHolder(dataDir)
  if (holder !== null) throw new Error(`cannot ${what}: a server (pid ${holder}) holds ${dataDir}; stop it first`)
}
