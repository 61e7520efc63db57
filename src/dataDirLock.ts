/*
 * One server per data directory: `server.lock` holds the pid of the server
 * that uses it. A lock whose process is gone (after kill -9) is stale and
 * taken over. Operator commands that change the data (restore, snapshot)
 * refuse while a live server holds the lock.
 */
import fs from 'node:fs'
import path from 'node:path'

function lockPath(dataDir: string): string {
  return path.join(dataDir, 'server.lock')
}

/** Whether a process with that pid runs (one this user may not signal counts as running). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
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
  fs.mkdirSync(dataDir, { recursive: true })
  const holder = lockHolder(dataDir)
  if (holder !== null) throw new Error(`the data directory ${dataDir} is in use by the server with pid ${holder}`)
  fs.writeFileSync(lockPath(dataDir), String(process.pid))
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
