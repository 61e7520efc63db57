/*
 * Deterministic ids: the SHA-256 of some name parts, shaped like a UUID
 * (version 5 layout, lower-case hex) so that it passes the id pattern of
 * every object. The same parts always give the same id, which turns "store
 * under this name" into a put of one known id: a second store overwrites.
 * Parts are joined with NUL, which no caller lets into a part.
 */
import crypto from 'node:crypto'

export function deterministicId(...parts: readonly string[]): string {
  const hash = crypto.createHash('sha256').update(parts.join('\u0000'), 'utf8').digest()
  hash[6] = ((hash[6] as number) & 0x0f) | 0x50
  hash[8] = ((hash[8] as number) & 0x3f) | 0x80
  const hex = hash.subarray(0, 16).toString('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`
}
