/*
 * Everything in DATA_DIR is private to the user that runs the server: the
 * LMDB environment holds password hashes, tokens and uploaded files, the
 * snapshots and exports hold the same, and the key files hold keys. So
 * every folder is made 0700 and every file 0600, explicitly, as each is
 * created: a process umask would not be enough (lmdb-js creates its files
 * 0664 before the umask, and a umask is the whole process's, not ours to
 * change), and it leaves folders that already exist as they are.
 *
 * A data directory written by an older version (files 0644, folders 0755)
 * is tightened when the store opens (`tightenDataDir`): a walk of the
 * directory, without following links, that takes the group's and others'
 * bits away from whatever has them. It says how many it changed.
 */
import fs from 'node:fs'
import path from 'node:path'

export const PRIVATE_DIR_MODE = 0o700
export const PRIVATE_FILE_MODE = 0o600
/** The bits of the group and of others. */
const SHARED_BITS = 0o077

/** Creates the folder (and missing parents) 0700, and makes it 0700 when it already existed. */
export function makePrivateDir(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE })
  if ((fs.statSync(dir).mode & SHARED_BITS) !== 0) fs.chmodSync(dir, PRIVATE_DIR_MODE)
}

/**
 * Takes the group's and others' bits from every folder and file under `dataDir` (and from `dataDir` itself) that
 * has any: folders become 0700, files 0600. Links are neither followed nor changed. Answers the paths changed.
 */
export function tightenDataDir(dataDir: string): string[] {
  const changed: string[] = []
  const visit = (entry: string): void => {
    try {
      visitOne(entry)
    } catch (error) {
      // Removed meanwhile (a temporary snapshot file renamed by a running writer): nothing left to tighten.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
    }
  }
  const visitOne = (entry: string): void => {
    const stats = fs.lstatSync(entry, { throwIfNoEntry: false })
    if (stats === undefined || stats.isSymbolicLink()) return
    if (stats.isDirectory()) {
      if ((stats.mode & SHARED_BITS) !== 0) {
        fs.chmodSync(entry, PRIVATE_DIR_MODE)
        changed.push(entry)
      }
      for (const name of fs.readdirSync(entry)) visit(path.join(entry, name))
    } else if (stats.isFile() && (stats.mode & SHARED_BITS) !== 0) {
      fs.chmodSync(entry, PRIVATE_FILE_MODE)
      changed.push(entry)
    }
  }
  visit(dataDir)
  return changed
}
