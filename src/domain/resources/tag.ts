/*
 * Tag (time/tags): a label time records carry (TimeRecord.tags); its name is
 * unique in the tenant, its colour optional. time/tags/{id}/timerecords
 * lists the records that carry it (POST there: a record with this tag).
 */
import { declareResource, field, pattern, size } from '../declare.js'

/** A colour as the web writes it: `#` and six hexadecimal digits. */
const COLOR_PATTERN = '#[0-9A-Fa-f]{6}'

export const Tag = declareResource({
  type: 'Tag',
  path: 'time/tags',
  writeRule: 'projectManager',
  description: 'a label of time records',
  displayName: (rec) => String(rec.name ?? ''),
  unique: [['name']],
  inner: [{ name: 'timerecords', childType: 'TimeRecord', via: 'tags' }],
  fields: [
    field.string('name', 'name of the tag, unique in the account', { required: true, inStub: true, indexed: true, constraints: [size(1, 100)] }),
    field.string('color', 'colour, #RRGGBB', { constraints: [pattern(COLOR_PATTERN, '#3366CC')] }),
    field.boolean('active', 'the tag is offered for new time records', { defaultValue: true }),
  ],
})
