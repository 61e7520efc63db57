/*
 * Whether a snapshot file passes its checks (header, length, SHA-256 of
 * the body), remembered per file so that pruning does not hash again a
 * file that a load or its writer checked in full: a file is never changed
 * once in place, so its size and modification time name its content.
 */
import crypto from 'node:crypto'
import fs from 'node:fs'
import { checkBodyBytes, checkSha256, headerOfFile } from './snapshotHeader.js'
import { SnapshotInvalidError } from './ports.js'

/**
 * What is known of snapshot files checked in full (by a load, by their writer, by snapshotFileProblem): the problem
 * found, or null. A file is never changed once in place, so its size and modification time name its content; a
 * file replaced under the same name is checked again.
 */
const checkedFiles = new Map<string, { stamp: string; problem: string | null }>()
/** Past this many files the memory starts over. */
const MAX_CHECKED_FILES = 10_000

function stampOf(file: string): string | null {
  const stats = fs.statSync(file, { throwIfNoEntry: false })
  return stats === undefined ? null : `${stats.size}:${stats.mtimeMs}`
}

/** Remembers what a full check of the file (its load, its writing) found: null when it is good. */
export function rememberSnapshotCheck(file: string, problem: string | null): void {
  const stamp = stampOf(file)
  if (stamp === null) return
  if (checkedFiles.size >= MAX_CHECKED_FILES) checkedFiles.clear()
  checkedFiles.set(file, { stamp, problem })
}

/** Bytes hashed per read when a file is checked. */
const CHECK_CHUNK_BYTES = 1024 * 1024

/**
 * Why the file cannot be the snapshot of `tenant` at `seq` (its header, the length and the SHA-256 of its body), or
 * null when it can. The body is hashed a chunk per read, reads being asynchronous, so a large file does not stop
 * the event loop; a file checked before (rememberSnapshotCheck) is not read again.
 */
export async function snapshotFileProblem(file: string, tenant: string, seq: number): Promise<string | null> {
  const known = checkedFiles.get(file)
  if (known !== undefined && known.stamp === stampOf(file)) return known.problem
  let problem: string | null = null
  try {
    const handle = await fs.promises.open(file, 'r')
    try {
      const { header, bodyOffset } = headerOfFile(handle.fd)
      if (header.tenant !== tenant || header.seq !== seq)
        throw new SnapshotInvalidError(`the header names tenant '${header.tenant}' at seq ${header.seq}, the file's place tenant '${tenant}' at seq ${seq}`)
      checkBodyBytes(header, (await handle.stat()).size - bodyOffset)
      const hash = crypto.createHash('sha256')
      const chunk = Buffer.allocUnsafe(CHECK_CHUNK_BYTES)
      for (let offset = 0; offset < header.bodyBytes; ) {
        const { bytesRead } = await handle.read(chunk, 0, Math.min(chunk.length, header.bodyBytes - offset), bodyOffset + offset)
        if (bytesRead === 0) throw new SnapshotInvalidError(`the file ends early, at byte ${bodyOffset + offset} (a torn file?)`)
        hash.update(chunk.subarray(0, bytesRead))
        offset += bytesRead
      }
      checkSha256(header, hash.digest('hex'))
    } finally {
      await handle.close()
    }
  } catch (error) {
    problem = error instanceof Error ? error.message : String(error)
  }
  rememberSnapshotCheck(file, problem)
  return problem
}
