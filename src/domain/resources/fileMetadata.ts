/*
 * FileMetadata (internal): what is known about an uploaded file (a user's
 * signature, the account logo). The bytes are not tenant state: they live in
 * the `files` table of LMDB under [tenant, fileKey], written in the same
 * commit as the log entry that stores this record (files.ts).
 */
import { declareResource, field, min, oneOf } from '../schema.js'

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
    field.string('ownerType', 'type of the object the file belongs to', { required: true, constraints: [oneOf('User', 'Account')] }),
    field.string('ownerId', 'id of the object the file belongs to', { required: true, indexed: true }),
    field.string('slot', 'which file of its owner this is', { required: true, constraints: [oneOf('signature', 'logo')] }),
    field.string('fileKey', 'key of the bytes in the LMDB files table (beside the tenant)', { required: true }),
  ],
})
