/*
 * One server per data directory: `server.lock` holds the pid of the server
 * that uses it. A lock whose process is gone (after kill -9) is stale and
 * taken over. Operator commands that change the data (restore, snapshot)
 * refuse while a live server holds the lock.
 *
 * The lock also says where that server is, for the operator commands that
 * talk to it (restore online, status, metrics): the lock is one JSON line,
 * `{"pid", "startedAt", "host", "port", "adminPort"}`, whose listeners are
 * filled in as each comes up (recordListeners: the admin listener first,
 * then the public one). A lock written by an older version holds only the
 * pid (a bare number, still read). The CLI so reaches the server that holds this data
 * directory, never whatever else listens on the ADMIN_PORT of its own
 * environment. The rewrite goes through a temporary file and a rename, so a
 * reader never sees half of it.
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

export function lockPath(dataDir: string): string {
  return path.join(dataDir, 'server.lock')
}

/** What a lock says: the server's pid, when it started, and once its listeners are up, where they are. */
export interface LockRecord {
  readonly pid: number
  /** Milliseconds since the epoch; null in a lock of an older version. */
  readonly startedAt: number | null
  /** The address of the public listener (HOST), its port and the admin listener's port (on 127.0.0.1); null until known. */
  readonly host: string | null
  readonly port: number | null
  readonly adminPort: number | null
}

function positiveInteger(value: unknown): number | null {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : null
}

/** The lock file's text read as a record (a JSON line, or a bare pid as older versions wrote); null when it is neither. */
export function parseLock(text: string): LockRecord | null {
  const trimmed = text.trim()
  if (/^\d+$/.test(trimmed)) {
    const pid = positiveInteger(Number(trimmed))
    return pid === null ? null : { pid, startedAt: null, host: null, port: null, adminPort: null }
  }
  let json: unknown
  try {
    json = JSON.parse(trimmed)
  } catch {
    return null
  }
  if (typeof json !== 'object' || json === null) return null
  const fields = json as Record<string, unknown>
  const pid = positiveInteger(fields.pid)
  if (pid === null) return null
  return {
    pid,
    startedAt: positiveInteger(fields.startedAt),
    host: typeof fields.host === 'string' && fields.host !== '' ? fields.host : null,
    port: positiveInteger(fields.port),
    adminPort: positiveInteger(fields.adminPort),
  }
}

/** The lock as it is on disk, whoever holds it (null: none, or unreadable). */
export function readLock(dataDir: string): LockRecord | null {
  try {
    return parseLock(fs.readFileSync(lockPath(dataDir), 'utf8'))
  } catch {
    return null
  }
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
  const state =
    afterName < 0
      ? undefined
      : stat
          .slice(afterName + 1)
          .trim()
          .split(' ')[0]
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

/** The lock of a live server (another process) holding the directory, or null. */
export function runningServer(dataDir: string): LockRecord | null {
  const record = readLock(dataDir)
  return record !== null && record.pid !== process.pid && isAlive(record.pid) ? record : null
}

/** The pid of a live server holding the directory, or null. */
export function lockHolder(dataDir: string): number | null {
  return runningServer(dataDir)?.pid ?? null
}

function writeLock(dataDir: string, record: LockRecord): void {
  const file = lockPath(dataDir)
  const temporary = `${file}.${process.pid}.tmp`
  fs.writeFileSync(temporary, `${JSON.stringify(record)}\n`, { mode: PRIVATE_FILE_MODE })
  fs.chmodSync(temporary, PRIVATE_FILE_MODE)
  fs.renameSync(temporary, file)
}

export function acquireLock(dataDir: string): void {
  makePrivateDir(dataDir)
  const holder = lockHolder(dataDir)
  if (holder !== null) throw new Error(`the data directory ${dataDir} is in use by the server with pid ${holder}`)
  writeLock(dataDir, { pid: process.pid, startedAt: Date.now(), host: null, port: null, adminPort: null })
}

/** Writes where this process's listeners are into the lock it holds (nothing when it holds none), as each comes up. */
export function recordListeners(dataDir: string, listeners: { host?: string; port?: number; adminPort?: number }): void {
  const record = readLock(dataDir)
  if (record === null || record.pid !== process.pid) return
  writeLock(dataDir, { ...record, ...listeners })
}

export function releaseLock(dataDir: string): void {
  try {
    if (readLock(dataDir)?.pid === process.pid) fs.rmSync(lockPath(dataDir))
  } catch {
    // already gone
  }
}

export function refuseWhileServing(dataDir: string, what: string): void {
  const holder = lockHolder(dataDir)
  if (holder !== null) throw new Error(`cannot ${what}: a server (pid ${holder}) holds ${dataDir}; stop it first`)
}
