/*
 * FileMetadata (internal): what is known about an uploaded file (a user's
 * signature, the account logo, an expense's receipt). Where it belongs and
 * the key of its bytes are the server's own (INTERNAL): an expense that
 * embeds its receipt shows name, type and size only. The bytes are not tenant state: they live in
 * the `files` table of LMDB under [tenant, fileKey], written in the same
 * commit as the log entry that stores this record (files.ts).
 */
import { declareResource, field, min, oneOf } from '../declare.js'

export const FileMetadata = declareResource({
  type: 'FileMetadata',
  path: null,
  internal: true,
  description: 'metadata of an uploaded file',
  displayName: (rec) => String(rec.fileName ?? ''),
  fields: [
    field.string('fileName', 'name of the file as uploaded', { required: true, inStub: true }),
    field.string('contentType', 'Content-Type of the file', { required: true }),
    field.long('contentSize', 'size of the file in bytes', { required: true, constraints: [min(0)] }),
    field.string('ownerType', 'type of the object the file belongs to', { access: 'INTERNAL', required: true, constraints: [oneOf('User', 'Account', 'Expense')] }),
    field.string('ownerId', 'id of the object the file belongs to', { access: 'INTERNAL', required: true, indexed: true }),
    field.string('slot', 'which file of its owner this is', { access: 'INTERNAL', required: true, constraints: [oneOf('signature', 'logo', 'receipt')] }),
    field.string('fileKey', 'key of the bytes in the LMDB files table (beside the tenant)', { access: 'INTERNAL', required: true }),
  ],
})
