/*
 * StorageEntry (internal): one text of the key/value storage, addressed by
 * group, key and scope. A private entry belongs to its `owner`; a public one
 * (owner null) is shared by the tenant. The id is derived from the address
 * (storage.ts), so storing again under the same address replaces the entry.
 */
import { EVERYONE, onlyUser } from '../audience.js'
import { declareResource, field, pattern } from '../declare.js'

/** Group and key names: 1 to 128 characters of letters, digits, dot, underscore and hyphen. */
export const STORAGE_NAME_PATTERN = '[A-Za-z0-9._-]{1,128}'

export const StorageEntry = declareResource({
  type: 'StorageEntry',
  path: null,
  internal: true,
  // In the change feed as resource `storage`: public entries reach everyone, private ones their owner (storage.ts).
  changeEvents: {
    resource: 'storage',
    audience: (rec) => (rec.publicScope === true ? EVERYONE : onlyUser(rec.owner)),
    object: (rec) => ({
      id: rec.id,
      group: rec.group,
      key: rec.itemKey,
      scope: rec.publicScope === true ? 'public' : 'private',
      contentType: rec.contentType,
      content: rec.content,
    }),
  },
  description: 'an entry of the key/value text storage',
  displayName: (rec) => `${String(rec.group ?? '')}/${String(rec.itemKey ?? '')}`,
  fields: [
    field.string('group', 'group the entry is listed in', { required: true, indexed: true, constraints: [pattern(STORAGE_NAME_PATTERN)] }),
    field.string('itemKey', 'key of the entry within its group', { required: true, constraints: [pattern(STORAGE_NAME_PATTERN)] }),
    field.boolean('publicScope', 'shared by the tenant (true) or private to its owner', { required: true }),
    field.ref('owner', 'User', 'the user a private entry belongs to; null for public entries'),
    field.string('contentType', 'Content-Type the text was stored with', { required: true }),
    field.string('content', 'the stored text (at most 16384 characters)', { required: true }),
  ],
})
