/*
 * Secret keys: a random 43-character text (like a token) that logs a user
 * in without a password, made by the server for the caller and for no one
 * else. The text is decided before the write (it is random) and shown
 * once, in the answer of its creation; the stored SecretKey holds only the
 * text's SHA-256 in `keyHash`, so neither the log nor a snapshot holds a
 * usable key. The record's id is a random UUID like every object's: it
 * says nothing of the text, and nothing a caller sends chooses either.
 *
 * Creating and removing a key are operations (operations/secretKeys.ts).
 * Login finds a key by the hash of the text it is given (an index lookup:
 * no secret is compared byte by byte). Keys made before `keyHash` existed
 * had their id derived from the text, which let a caller who could choose
 * an id choose a key for another user: they no longer log in.
 */
import type { StateView, Tx } from './tx.js'
import { newToken, secretId } from './credentials.js'
import { SecretKey } from './resources/secretKey.js'
import type { Rec } from './schema.js'
import { removeAllOfUser } from './userRecords.js'

export function newSecretKey(): string {
  return newToken()
}

/**
 * Removes every secret key of the user for good, trashed ones included with their trash items. A key cascades to
 * nothing, so that is all trash.ts's removeForGood would do; done here, User's hook (passwordRules.ts) needs no
 * import of the trash, which imports every declaration, User's too.
 */
export function revokeSecretKeysOf(tx: Tx, userId: string): void {
  removeAllOfUser(tx, SecretKey.type, userId, {
    remove: (rec) => {
      if (typeof rec.trashItem === 'string' && tx.state.get('TrashItem', rec.trashItem) !== undefined) tx.del('TrashItem', rec.trashItem)
      tx.del(SecretKey.type, rec.id)
    },
  })
}

/** The live key whose text is `key`, if any. */
export function findSecretKey(state: StateView, key: string): Rec | undefined {
  for (const rec of state.collection(SecretKey.type).lookup('keyHash', secretId(key))) if (rec.trashItem === null) return rec
  return undefined
}
