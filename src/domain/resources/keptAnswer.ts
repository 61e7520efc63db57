/*
 * KeptAnswer (internal): the answer a write with an `Idempotency-Key`
 * header gave, kept so that a retry of the same request answers it again
 * instead of writing a second time (http/keyedWrite.ts). It is put in the
 * very write it answers, so it is in that write's log entry: whatever the
 * log keeps of the write (after a crash, a restart, a failover), it keeps
 * this answer with it. Its id is a deterministic id of the user and the key
 * (operations/keptAnswers.ts), so the key is scoped to its user and found
 * by id; `createdAt` is when the first request was answered. Never an
 * event of the change feed (internal), never shown.
 */
import { declareResource, field } from '../declare.js'

export const KeptAnswer = declareResource({
  type: 'KeptAnswer',
  path: null,
  internal: true,
  description: 'the answer of a request made with an Idempotency-Key',
  displayName: () => 'kept answer',
  removedForGood: true,
  fields: [
    field.string('fingerprint', 'SHA-256 of the request: method, path, query and body', { required: true }),
    field.integer('status', 'the HTTP status answered', { required: true }),
    field.string('contentType', 'the Content-Type answered'),
    field.string('location', 'the Location answered, if any'),
    field.string('etag', 'the ETag answered, if any'),
    field.string('body', 'the body answered', { required: true }),
  ],
})
