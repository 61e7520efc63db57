/*
 * The ids of access tokens remembered across requests (src/http/tokenIds.ts):
 * the same id the token's SHA-256 is, whether hashed or remembered, and the
 * memory bounded in entries and in the length of a text it keeps.
 */
import t from 'tap'
import { newToken, secretId } from '../../../src/domain/credentials.js'
import { MAX_REMEMBERED_TOKENS, rememberedTokenCount, rememberedTokenId } from '../../../src/http/tokenIds.js'

t.test('a token id is its SHA-256, the first time and when remembered', async (t) => {
  const token = newToken()
  const before = rememberedTokenCount()
  t.equal(rememberedTokenId(token), secretId(token))
  t.equal(rememberedTokenCount(), before + 1, 'the token is remembered')
  t.equal(rememberedTokenId(token), secretId(token), 'the remembered id')
  t.equal(rememberedTokenCount(), before + 1, 'and kept once')
})

t.test('a text longer than a token is hashed every time, not kept', async (t) => {
  const long = `${newToken()}${newToken()}`
  const before = rememberedTokenCount()
  t.equal(rememberedTokenId(long), secretId(long))
  t.equal(rememberedTokenCount(), before)
})

t.test('at most MAX_REMEMBERED_TOKENS are kept, the oldest dropped first', async (t) => {
  const first = newToken()
  rememberedTokenId(first)
  for (let count = 0; count < MAX_REMEMBERED_TOKENS + 10; count += 1) rememberedTokenId(newToken())
  t.equal(rememberedTokenCount(), MAX_REMEMBERED_TOKENS)
  t.equal(rememberedTokenId(first), secretId(first), 'a dropped token is hashed again, to the same id')
})
