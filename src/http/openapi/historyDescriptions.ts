/*
 * What the API description says of the account's history (routes/history.ts):
 * every change, newest first, for the owner and the admins, filtered and
 * paged, or as a CSV file. Joined into the fixed routes' descriptions
 * (fixedRouteDescriptions.ts); an object's history is described with the
 * resources (resourcePaths.ts).
 */
import { ACTIVITY_EXPORT_MAX_ROWS } from '../routes/history.js'
import type { FixedRouteDescription } from './fixedRouteDescription.js'
import { schemaRef } from './jsonSchema.js'
import { answers, dataAnswer, exportable, withHeaders } from './operations.js'
import { parameterRef } from './parameters.js'

export const HISTORY_DESCRIPTIONS: readonly [string, FixedRouteDescription][] = [
  [
    'GET activity',
    {
      summary: 'the account’s history: every change, newest first (owner and admins)',
      description: [
        'Every change the log still holds (from `availableFrom`), newest first, as an object’s `$history` tells it; for the account’s owner and admins (403 TL01-1008 otherwise), each change as its audience sees it (someone else’s personal project stays hidden).',
        "`$filter` runs over `seq`, `at` (a date), `user` (the id of the user who made it), `resource` (as the change feed names it: `time/projects`), `type` (`Project`), `kind` and `objectId`: `user eq '<id>' and at ge datetime'2026-11-01T00:00:00Z'`.",
        `\`format=csv\` (or \`xlsx\`) downloads the page as a file (up to ${ACTIVITY_EXPORT_MAX_ROWS} rows; \`$top\` and \`before\` as for the JSON answer), the changed fields as JSON text.`,
      ].join('\n\n'),
      tag: 'History',
      query: [parameterRef('filter'), parameterRef('historyTop'), parameterRef('before'), parameterRef('format'), parameterRef('suppress_response_code')],
      answers: answers({ '200': withHeaders(exportable(dataAnswer('the changes', schemaRef('History'))), ['Link']) }),
    },
  ],
]
