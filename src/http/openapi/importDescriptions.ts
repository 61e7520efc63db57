/*
 * What the API description says of the import (`POST /import/{source}`,
 * routes/imports.ts): its query options, the CSV body and the outcome it
 * answers. Joined into the fixed routes' descriptions
 * (fixedRouteDescriptions.ts).
 */
import { IMPORT_FIELDS, IMPORT_SOURCES } from '../../domain/imports/importLayouts.js'
import { DATE_FORMATS, DURATION_UNITS } from '../../domain/imports/importValues.js'
import { MAX_PREVIEW_ROWS } from '../routes/imports.js'
import type { FixedRouteDescription } from './fixedRouteDescription.js'
import { closedObject, nullable, type JsonSchema } from './jsonSchema.js'
import { answers, dataAnswer } from './operations.js'
import { parameterRef, type Parameter } from './parameters.js'

function option(name: string, description: string, schema: JsonSchema = { type: 'string' }): Parameter {
  return { name, in: 'query', description, schema }
}

const COUNTS = closedObject({ clients: { type: 'integer' }, projects: { type: 'integer' }, tasks: { type: 'integer' }, tags: { type: 'integer' } })
const NAMED = nullable(closedObject({ name: { type: 'string' }, id: nullable({ type: 'string' }), existing: { type: 'boolean', description: 'false: the import makes it (a dry run shows no id)' } }))
const LOCAL_TIME = nullable({ type: 'string', description: 'ISO 8601 in the import’s time zone, with its offset' })

const OUTCOME = closedObject(
  {
    source: { type: 'string', enum: [...IMPORT_SOURCES] },
    dryRun: { type: 'boolean' },
    rows: { type: 'integer', description: 'rows read, one time record each' },
    timeZone: { type: 'string', description: 'the time zone local times were read in' },
    created: closedObject({ clients: { type: 'integer' }, projects: { type: 'integer' }, tasks: { type: 'integer' }, tags: { type: 'integer' }, timeRecords: { type: 'integer' } }),
    matched: { ...COUNTS, description: 'existing objects the rows named' },
    users: { type: 'integer', description: 'distinct users the records belong to' },
    assignedToCaller: { type: 'integer', description: 'rows of unknown users given to the caller (unknown_users=self)' },
    ignoredColumns: { type: 'array', items: { type: 'string' }, description: 'columns of the file no field reads' },
    preview: {
      type: 'array',
      description: 'a dry run’s first rows as read (empty for an import)',
      items: closedObject({
        line: { type: 'integer' },
        user: closedObject({ id: { type: 'string' }, email: { type: 'string' } }),
        assignedToCaller: { type: 'boolean' },
        client: NAMED,
        project: NAMED,
        task: NAMED,
        tags: { type: 'array', items: NAMED },
        start: LOCAL_TIME,
        stop: LOCAL_TIME,
        duration: nullable({ type: 'integer', description: 'milliseconds' }),
        billable: nullable({ type: 'boolean' }),
        description: nullable({ type: 'string' }),
      }),
    },
  },
  'what the import made and matched',
)

const DESCRIPTION = [
  `The CSV file of a tool’s detailed time report becomes time records — one per row — with the clients, projects, tasks and tags they name, matched by name (without regard to case) to those the caller sees or made; users are found by e-mail (Harvest: by first and last name). Sources: ${IMPORT_SOURCES.join(', ')} (generic: the columns named by map.<field>=<header>; fields ${IMPORT_FIELDS.join(', ')}).`,
  `One write, all or nothing, at most MAX_IMPORT_ROWS rows (100,000 by default) and MAX_IMPORT_BYTES bytes (32 MiB); each object is made under the caller’s write rules (records of other users need an admin, or a project manager owning the project). A refusal (400 bad value, 403, 412) names the line and the column. It shows in the change feed like any write.`,
].join('\n\n')

export const IMPORT_DESCRIPTIONS: readonly [string, FixedRouteDescription][] = [
  [
    'POST import/:source',
    {
      summary: 'import time records from a CSV export (Toggl, Clockify, Harvest, Kimai, generic)',
      description: DESCRIPTION,
      tag: 'Import',
      query: [
        option('dry_run', '`true`: answer what would be made, store nothing', { type: 'string', enum: ['true', 'false'] }),
        option('preview', `rows a dry run shows as read (default 10, at most ${MAX_PREVIEW_ROWS})`, { type: 'integer', minimum: 0, maximum: MAX_PREVIEW_ROWS }),
        option('unknown_users', '`self`: rows whose user is unknown become the caller’s (default `refuse`: 400 naming the line)', { type: 'string', enum: ['refuse', 'self'] }),
        option('time_zone', 'IANA time zone of the file’s local times (default: the account’s)'),
        option('date_format', 'the order of dates that are not yyyy-MM-dd (default: dots day first, slashes and dashes month first)', { type: 'string', enum: [...DATE_FORMATS] }),
        option('duration_unit', 'what a plain number in the duration column counts (default hours)', { type: 'string', enum: Object.keys(DURATION_UNITS) }),
        option('delimiter', 'the field delimiter (default: the one the header line holds most)', { type: 'string', enum: [',', ';', 'tab'] }),
        option('tag_separator', 'what separates the tags of a cell (default `,`)'),
        option('map.project', 'map.<field>=<header>: the column of a field (any field, on any source); e.g. map.project=Projekt'),
        parameterRef('format'),
        parameterRef('suppress_response_code'),
      ],
      body: {
        description: 'the CSV file, UTF-8, a header line first',
        required: true,
        content: {
          'text/csv': {
            schema: { type: 'string' },
            examples: {
              toggl: {
                summary: 'Toggl Track, detailed report',
                value:
                  'User,Email,Client,Project,Task,Description,Billable,Start date,Start time,End date,End time,Duration,Tags,Amount (USD)\nAda Lovelace,ada@acme.test,Globex,Website,Design,"Header, footer",Yes,2025-03-03,09:00:00,2025-03-03,10:30:00,01:30:00,"design, web",\n',
              },
            },
          },
        },
      },
      answers: answers({
        '201': dataAnswer('imported: what was made and matched', OUTCOME),
        '200': dataAnswer('dry_run=true: what would be made, and the first rows as read; nothing stored', OUTCOME),
      }),
    },
  ],
]
