/*
 * The Idempotency-Key header in the description (http/keyedWrite.ts): a
 * parameter of every signed-in write (POST, PUT, PATCH, DELETE: the
 * resources' writes, `$set`, the actions, batch, storage…), and the
 * `Idempotent-Replayed` header on their answers of 2xx. Added to the
 * operations once they are built, as the router adds the behaviour to the
 * routes: no operation describes it on its own. The writes that refuse a
 * key (a file's upload and removal, `$setUrlPrefix`) are left without it.
 */
import { MAX_IDEMPOTENCY_KEY_CHARS } from '../idempotencyKey.js'
import type { JsonSchema } from './jsonSchema.js'
import { SIGNED_IN, type Operation } from './operations.js'
import type { Parameter } from './parameters.js'

type Paths = Record<string, Record<string, Operation>>

const WRITING_METHODS = new Set(['post', 'put', 'patch', 'delete'])
/** The writes that refuse a key (routes/files.ts, routes/urlPrefix.ts). */
const REFUSING_KEYS = /\/(?:signature|logo|receipt)(?:\/upload)?$|\/\$setUrlPrefix$/

export const IDEMPOTENCY_KEY_PARAMETER: Parameter = {
  name: 'Idempotency-Key',
  in: 'header',
  description: `makes the write safe to retry: 1–${MAX_IDEMPOTENCY_KEY_CHARS} printable ASCII characters, a new one per request (a UUID). The first answer (2xx or 4xx) is kept with the write; a retry with the same key and the same method, path, query and body within IDEMPOTENCY_KEY_LIFETIME_MS answers it again with \`Idempotent-Replayed: true\` and writes nothing. The same key with another request: 422 TL01-1113; while the first is in flight: 409 TL01-1114; a malformed key: 400 TL01-1112. Keys are the user’s own`,
  schema: { type: 'string', minLength: 1, maxLength: MAX_IDEMPOTENCY_KEY_CHARS, pattern: '^[\\x20-\\x7e]+$' },
}

export const REPLAYED_ANSWER_HEADER: { description: string; schema: JsonSchema } = {
  description: '`true` when the answer is the kept answer of an earlier request with the same Idempotency-Key (nothing was written)',
  schema: { type: 'string', enum: ['true'] },
}

/** The answers, each 2xx with the replay header (new objects: an operation's answers may be shared constants). */
function withReplayHeader(responses: Operation['responses']): Operation['responses'] {
  const replayed = { 'Idempotent-Replayed': { $ref: '#/components/headers/Idempotent-Replayed' } }
  return Object.fromEntries(
    Object.entries(responses).map(([status, answer]) => {
      if (!status.startsWith('2') || typeof answer !== 'object' || answer === null || '$ref' in answer) return [status, answer]
      const headers = (answer as { headers?: Record<string, unknown> }).headers ?? {}
      return [status, { ...answer, headers: { ...headers, ...replayed } }]
    }),
  )
}

/** The paths with the key on their signed-in writes and the replay header on those writes' 2xx answers. */
export function withIdempotencyKeys(paths: Paths): Paths {
  for (const [path, item] of Object.entries(paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (!WRITING_METHODS.has(method) || operation.security !== SIGNED_IN || REFUSING_KEYS.test(path)) continue
      item[method] = { ...operation, parameters: [...(operation.parameters ?? []), { $ref: '#/components/parameters/idempotencyKey' }], responses: withReplayHeader(operation.responses) }
    }
  }
  return paths
}
