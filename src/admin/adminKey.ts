/*
 * The admin key: ADMIN_KEY from the environment, else one generated on
 * first start and kept in DATA_DIR/admin-key (mode 0600), like the API key.
 * Keys are compared in constant time (over their SHA-256, so the lengths
 * do not leak either).
 */
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import type { Config } from '../config.js'

export function adminKeyFile(dataDir: string): string {
  return path.join(dataDir, 'admin-key')
}

/** The configured admin key, or the one kept in DATA_DIR (made, and its place printed, on first start). */
export function adminKeyFor(config: Config): string {
  if (config.adminKey !== null) return config.adminKey
  const file = adminKeyFile(config.dataDir)
  if (!fs.existsSync(file)) {
    const key = crypto.randomBytes(24).toString('base64url')
    fs.writeFileSync(file, `${key}\n`, { mode: 0o600 })
    if (!config.quiet) console.log(`Generated admin key, kept in ${file}`)
  }
  const key = fs.readFileSync(file, 'utf8').trim()
  if (key === '') throw new Error(`the admin key file ${file} is empty; delete it to have a new key made`)
  return key
}

export function sameSecret(given: string, expected: string): boolean {
  const digest = (text: string) => crypto.createHash('sha256').update(text).digest()
  return crypto.timingSafeEqual(digest(given), digest(expected))
}
