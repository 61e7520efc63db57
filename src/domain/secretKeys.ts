/*
 * Secret keys: a random 43-character text (like a token) that logs a user
 * in without a password. The stored SecretKey's id is derived from the key:
 * the first 128 bits of its SHA-256, written as a lower-case UUID. So the
 * id fits the id pattern of every object, login finds the key by one map
 * lookup (no secret compared byte by byte), and the store holds no usable
 * key — only a truncated hash of 256 random bits. The text itself is shown
 * once, in the answer of its creation.
 */
import { newToken, secretId } from './credentials.js'

export function newSecretKey(): string {
  return newToken()
}

/** The id of the SecretKey record of a key text. */
export function secretKeyId(key: string): string {
  const hex = secretId(key).slice(0, 32)
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`
}
