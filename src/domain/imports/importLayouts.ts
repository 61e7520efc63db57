/*
 * Which column of an import file means what: the layouts of the detailed
 * time reports that Toggl Track, Clockify, Harvest and Kimai export as CSV
 * (their header names, as each tool writes them in English), and the
 * `generic` source, whose columns the caller names.
 *
 * A layout maps the import's fields (ImportField) to header names; headers
 * are compared case-insensitively, without surrounding spaces, and the
 * first name of a field's list found in the file wins (Clockify writes its
 * duration twice: `Duration (h)` as 1:30:00 is read before `Duration
 * (decimal)`). `map.<field>=<header>` in the query names a field's column
 * on any source (an export with translated headers, a generic file); a
 * field or a header that does not exist is refused. Columns no field reads
 * (money, rates, custom fields) are left alone and listed in the answer.
 *
 *   toggl     User, Email, Client, Project, Task, Description, Billable,
 *             Start date, Start time, End date, End time, Duration, Tags
 *             (and Amount (…), not read)
 *   clockify  Project, Client, Description, Task, User, Group, Email, Tags,
 *             Billable, Start Date, Start Time, End Date, End Time,
 *             Duration (h), Duration (decimal) (and the rates, not read)
 *   harvest   Date, Client, Project, Project Code, Task, Notes, Hours,
 *             Billable?, Invoiced?, Approved?, First Name, Last Name, …
 *             (no times of day, no e-mail: users are found by name)
 *   kimai     Date, From, To, Duration, …, Name, User, E-mail, Customer,
 *             Project, Activity, Description, Billable, Tags, … (an
 *             activity is a task)
 *
 * `required` lists what a file must have: each inner list is a choice (one
 * of its fields suffices). The user columns are not required when rows
 * without a known user go to the caller (unknown_users=self).
 */
import { wrongParameter } from '../errors.js'

/** What a column of an import can mean. */
export const IMPORT_FIELDS = [
  'email',
  'firstName',
  'lastName',
  'client',
  'project',
  'task',
  'description',
  'billable',
  'tags',
  'date',
  'startTime',
  'endDate',
  'endTime',
  'start',
  'end',
  'duration',
] as const
export type ImportField = (typeof IMPORT_FIELDS)[number]

export const IMPORT_SOURCES = ['toggl', 'clockify', 'harvest', 'kimai', 'generic'] as const
export type ImportSource = (typeof IMPORT_SOURCES)[number]

interface ImportLayout {
  readonly headers: Partial<Record<ImportField, readonly string[]>>
  /** Each entry: at least one of these fields must have a column. */
  readonly required: readonly (readonly ImportField[])[]
  /** The fields that name the row's user: not required with unknown_users=self. */
  readonly userFields: readonly ImportField[]
}

const USER_BY_EMAIL: readonly ImportField[] = ['email']

const IMPORT_LAYOUTS: Record<ImportSource, ImportLayout> = {
  toggl: {
    headers: {
      email: ['Email'],
      client: ['Client'],
      project: ['Project'],
      task: ['Task'],
      description: ['Description'],
      billable: ['Billable'],
      date: ['Start date'],
      startTime: ['Start time'],
      endDate: ['End date', 'Stop date'],
      endTime: ['End time', 'Stop time'],
      duration: ['Duration'],
      tags: ['Tags'],
    },
    required: [['email'], ['date'], ['startTime'], ['endTime', 'duration']],
    userFields: USER_BY_EMAIL,
  },
  clockify: {
    headers: {
      email: ['Email'],
      client: ['Client'],
      project: ['Project'],
      task: ['Task'],
      description: ['Description'],
      billable: ['Billable'],
      date: ['Start Date'],
      startTime: ['Start Time'],
      endDate: ['End Date'],
      endTime: ['End Time'],
      duration: ['Duration (h)', 'Duration (decimal)', 'Duration'],
      tags: ['Tags'],
    },
    required: [['email'], ['date'], ['startTime'], ['endTime', 'duration']],
    userFields: USER_BY_EMAIL,
  },
  harvest: {
    headers: {
      email: ['Email'],
      firstName: ['First Name'],
      lastName: ['Last Name'],
      client: ['Client'],
      project: ['Project'],
      task: ['Task'],
      description: ['Notes'],
      billable: ['Billable?'],
      date: ['Date'],
      duration: ['Hours'],
    },
    required: [['email', 'firstName'], ['date'], ['duration']],
    userFields: ['email', 'firstName', 'lastName'],
  },
  kimai: {
    headers: {
      email: ['E-mail', 'Email'],
      client: ['Customer'],
      project: ['Project'],
      task: ['Activity'],
      description: ['Description'],
      billable: ['Billable'],
      date: ['Date'],
      startTime: ['From', 'Begin'],
      endTime: ['To', 'End'],
      duration: ['Duration'],
      tags: ['Tags'],
    },
    required: [['email'], ['date'], ['startTime'], ['endTime', 'duration']],
    userFields: USER_BY_EMAIL,
  },
  generic: {
    headers: {},
    required: [
      ['email', 'firstName'],
      ['date', 'start'],
      ['endTime', 'end', 'duration'],
    ],
    userFields: ['email', 'firstName', 'lastName'],
  },
}

/** Where each field is in the file: its column's index and header; and the columns no field reads. */
export interface ColumnPlan {
  readonly columns: ReadonlyMap<ImportField, { readonly index: number; readonly header: string }>
  readonly ignored: readonly string[]
}

function headerKey(header: string): string {
  return header.trim().toLowerCase()
}

export function isImportSource(name: string): name is ImportSource {
  return (IMPORT_SOURCES as readonly string[]).includes(name)
}

export function isImportField(name: string): name is ImportField {
  return (IMPORT_FIELDS as readonly string[]).includes(name)
}

/**
 * The columns of a file with this header row for `source`, `mapping` (field → header, from `map.<field>`) naming
 * columns too; 400 for a mapping to a header the file lacks, or a file without a required column.
 */
export function planColumns(source: ImportSource, header: readonly string[], mapping: ReadonlyMap<ImportField, string>, usersMayBeMissing: boolean): ColumnPlan {
  const layout = IMPORT_LAYOUTS[source]
  const indexOf = new Map<string, number>()
  header.forEach((name, index) => {
    if (!indexOf.has(headerKey(name))) indexOf.set(headerKey(name), index)
  })
  const columns = new Map<ImportField, { index: number; header: string }>()
  for (const field of IMPORT_FIELDS) {
    const mapped = mapping.get(field)
    if (mapped !== undefined) {
      const index = indexOf.get(headerKey(mapped))
      if (index === undefined) throw wrongParameter(`map.${field}: the file has no column '${mapped}' (its columns: ${header.join(', ')})`)
      columns.set(field, { index, header: header[index] as string })
      continue
    }
    for (const name of layout.headers[field] ?? []) {
      const index = indexOf.get(headerKey(name))
      if (index !== undefined) {
        columns.set(field, { index, header: header[index] as string })
        break
      }
    }
  }
  for (const choice of layout.required) {
    if (usersMayBeMissing && choice.every((field) => layout.userFields.includes(field))) continue
    if (choice.some((field) => columns.has(field))) continue
    const wanted = choice.map((field) => (source === 'generic' ? `map.${field}` : `'${layout.headers[field]?.[0] ?? field}'`)).join(' or ')
    throw wrongParameter(`the file has no column for ${choice.join(' or ')}: a ${source} import needs ${wanted}${source === 'generic' ? '' : ' (or map.<field>=<header>)'}`)
  }
  if (columns.has('firstName') !== columns.has('lastName') && !columns.has('email')) {
    throw wrongParameter('users are found by e-mail, or by first and last name together: the file has only one of the two name columns')
  }
  const read = new Set([...columns.values()].map((column) => column.index))
  return { columns, ignored: header.filter((_, index) => !read.has(index)) }
}
