/*
 * Secrets: passwords are stored as Argon2id hashes in the PHC string form
 * (`$argon2id$v=19$m=…,p=…,t=…$salt$hash`, the cost travels in the hash),
 * as the OWASP Password Storage Cheat Sheet recommends (its minimum:
 * m = 19 MiB, t = 2, p = 1; the `argon2` binding runs the hash on libuv's
 * thread pool, so a login never blocks the event loop). Hashes written
 * before by scrypt (`scrypt$N$salt$hash`, base64url) still verify; a
 * verified password whose hash is scrypt or of another Argon2 cost is
 * hashed again (`checkPassword` answers the new hash, the login logs it).
 * Tokens and secret keys are random nanoid strings of 43 characters
 * (256 bits), stored only as their SHA-256, so a log or snapshot never
 * holds a usable secret. Hashing is done before a write is decided (it is
 * slow and random), and its result travels in the logged command.
 */
import crypto from 'node:crypto'
import { promisify } from 'node:util'
import argon2 from 'argon2'
import { nanoid } from 'nanoid'
import { violation } from './errors.js'

const scrypt = promisify(crypto.scrypt) as (password: string, salt: Buffer, keylen: number, options: crypto.ScryptOptions) => Promise<Buffer>

export const TOKEN_LENGTH = 43
export const MIN_PASSWORD_LENGTH = 8
export const MAX_PASSWORD_LENGTH = 1024

/**
 * 412 TL01-1104 (constraint Size) unless `password` is a string of MIN_PASSWORD_LENGTH to MAX_PASSWORD_LENGTH
 * characters: checked on the plain password before it is hashed (the hash hides its length), wherever one is
 * received (a create or update of a hashed field, sign-up, step 2 of a password change). `entityType` and `field`
 * name it in the violation.
 */
export function checkPasswordLength(password: unknown, entityType = 'User', field = 'password'): asserts password is string {
  if (typeof password === 'string' && password.length >= MIN_PASSWORD_LENGTH && password.length <= MAX_PASSWORD_LENGTH) return
  const message = `${entityType}.${field} must have ${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters`
  throw violation([{ entityType, field, constraint: 'Size', message }])
}

/** The Argon2id cost of new hashes: memory in KiB, passes over it, lanes. */
export interface PasswordCost {
  readonly memoryKiB: number
  readonly passes: number
  readonly parallelism: number
}

/** OWASP's minimum for Argon2id (Password Storage Cheat Sheet): 19 MiB, 2 passes, 1 lane. */
export const OWASP_PASSWORD_COST: PasswordCost = { memoryKiB: 19_456, passes: 2, parallelism: 1 }

function argon2Options(cost: PasswordCost): argon2.HashOptions {
  return { type: argon2.argon2id, memoryCost: cost.memoryKiB, timeCost: cost.passes, parallelism: cost.parallelism }
}

export function hashPassword(password: string, cost: PasswordCost): Promise<string> {
  return argon2.hash(password, argon2Options(cost))
}

/** The outcome of a password check; `rehashed`: the password hashed at the current cost, when the stored hash is not. */
export interface PasswordCheck {
  readonly matches: boolean
  readonly rehashed: string | null
}

/** Hashes of a password nobody knows, per cost: checking against one costs what a real check costs. */
const decoyHashes = new Map<string, Promise<string>>()

function decoyHash(cost: PasswordCost): Promise<string> {
  const key = `${cost.memoryKiB}/${cost.passes}/${cost.parallelism}`
  let decoy = decoyHashes.get(key)
  if (decoy === undefined) {
    decoy = hashPassword(crypto.randomUUID(), cost)
    decoyHashes.set(key, decoy)
  }
  return decoy
}

async function scryptMatches(password: string, stored: string): Promise<boolean> {
  const [, costText, saltText, hashText] = stored.split('$')
  const storedCost = Number(costText)
  const expected = Buffer.from(hashText ?? '', 'base64url')
  if (!Number.isSafeInteger(storedCost) || storedCost < 2 || expected.length === 0) return false
  try {
    const actual = await scrypt(password, Buffer.from(saltText ?? '', 'base64url'), expected.length, { N: storedCost, r: 8, p: 1, maxmem: 256 * storedCost * 8 })
    return crypto.timingSafeEqual(actual, expected)
  } catch {
    return false
  }
}

async function argon2Matches(password: string, stored: string): Promise<boolean> {
  try {
    return await argon2.verify(stored, password)
  } catch {
    return false
  }
}

/**
 * Checks a password against a stored hash (Argon2id, or a scrypt hash of
 * before). Without a stored hash (no such user) it checks against a decoy
 * of the current cost, so the answer takes as long and is false.
 */
export async function checkPassword(password: string, stored: string | null | undefined, cost: PasswordCost): Promise<PasswordCheck> {
  if (typeof stored === 'string' && stored.startsWith('scrypt$')) {
    const matches = await scryptMatches(password, stored)
    return { matches, rehashed: matches ? await hashPassword(password, cost) : null }
  }
  if (typeof stored === 'string' && stored.startsWith('$argon2')) {
    const matches = await argon2Matches(password, stored)
    const stale = matches && argon2.needsRehash(stored, { memoryCost: cost.memoryKiB, timeCost: cost.passes, parallelism: cost.parallelism })
    return { matches, rehashed: stale || (matches && !stored.startsWith('$argon2id$')) ? await hashPassword(password, cost) : null }
  }
  await argon2Matches(password, await decoyHash(cost))
  return { matches: false, rehashed: null }
}

export function newToken(): string {
  return nanoid(TOKEN_LENGTH)
}

/**
 * The stored id of a token or secret key. Every authenticated request
 * computes one: `crypto.hash` (Node ≥ 20.12) takes 0.25 µs where a
 * `createHash` object took 1 µs and a native handle for the GC.
 */
export function secretId(secret: string): string {
  return crypto.hash('sha256', secret, 'hex')
}

export function constantTimeEqual(a: string, b: string): boolean {
  return crypto.timingSafeEqual(crypto.hash('sha256', a, 'buffer'), crypto.hash('sha256', b, 'buffer'))
}
