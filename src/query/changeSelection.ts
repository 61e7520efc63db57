/*
 * Which events a subscriber asked for — the options of the change feed
 * (`resources=`, `$filter`, `fields=stub`, `no_expand`, `dates=iso`) and
 * the same fields of a webhook — and the choice of them among one entry's changes for one
 * caller: the changes of the chosen resources that the caller may see now
 * (the change's audience, judged once per change for all subscribers:
 * domain/changes.ts EventTexts.audience; here only compared with the
 * caller) and that pass the filter, each as its event's JSON text.
 *
 * The filter is compiled once per chosen resource, so it must name fields
 * each of them has (400 otherwise), and it needs `resources=`: a filter
 * over every resource would be refused by most. A `removed` change has no
 * object left to test: it passes.
 */
import type { Caller } from '../domain/caller.js'
import { admits } from '../domain/audience.js'
import { eventDeclOf, type EventTexts, type Change, type EventForm, type EventText } from '../domain/changes.js'
import { ApiError, wrongParameter } from '../domain/errors.js'
import type { ResourceDecl } from '../domain/schema.js'
import { compiledFilter } from './compiledFilters.js'
import type { CompiledFilter } from './filterCompiler.js'

export interface ChangeSelectionOptions {
  /** Comma-separated resource paths; undefined or empty: every resource. */
  readonly resources?: string
  readonly filter?: string
  /** `stub`: objects as stubs. */
  readonly fields?: string
  readonly noExpand?: boolean
  /** Dates as ISO 8601 text instead of `/Date(ms)/` (the feed's `dates=iso`). */
  readonly isoDates?: boolean
}

/** One event chosen for a subscriber: the text shared by every subscriber who gets it. */
export type ChosenEvent = EventText

export class ChangeSelection {
  private constructor(
    /** The chosen resources with their compiled filter (null: no filter); null: every resource, unfiltered. */
    private readonly resources: ReadonlyMap<ResourceDecl, CompiledFilter | null> | null,
    readonly form: EventForm,
    readonly isoDates: boolean,
  ) {}

  /** Parses the options; 400 TL01-1105 naming what is wrong. */
  static parse(options: ChangeSelectionOptions): ChangeSelection {
    const paths = (options.resources ?? '')
      .split(',')
      .map((path) => path.trim())
      .filter((path) => path !== '')
    const filterText = options.filter?.trim() ?? ''
    if (filterText !== '' && paths.length === 0) throw wrongParameter('a $filter on changes needs resources=: the filter is checked against each resource named there')
    let resources: Map<ResourceDecl, CompiledFilter | null> | null = null
    if (paths.length > 0) {
      resources = new Map()
      for (const path of paths) {
        const decl = eventDeclOf(path.replace(/^\/+|\/+$/g, ''))
        if (decl === undefined) throw wrongParameter(`resources: '${path}' is no resource whose changes are told (a path as under /v1, or 'storage')`)
        resources.set(decl, filterText === '' ? null : filterFor(decl, path, filterText))
      }
    }
    const fields = options.fields?.trim() ?? ''
    if (fields !== '' && fields !== 'stub') throw wrongParameter(`fields: '${fields}' is not offered (fields=stub gives each object as its stub)`)
    const form: EventForm = fields === 'stub' ? 'stub' : options.noExpand === true ? 'fullWithStubs' : 'full'
    return new ChangeSelection(resources, form, options.isoDates === true)
  }

  /** Whether events of this type may be chosen at all (cheap: before anything is rendered). */
  covers(decl: ResourceDecl): boolean {
    return this.resources === null || this.resources.has(decl)
  }

  /** The events among `changes` that `caller` gets, in their order. */
  choose(caller: Caller, changes: readonly Change[], texts: EventTexts): ChosenEvent[] {
    const chosen: ChosenEvent[] = []
    for (const change of changes) {
      if (!this.covers(change.decl) || !admits(texts.audience(change), caller)) continue
      const filter = this.resources?.get(change.decl) ?? null
      if (filter !== null && change.rec !== null && !filter.test(change.rec, texts.context)) continue
      chosen.push(texts.text(change, this.form, this.isoDates))
    }
    return chosen
  }
}

function filterFor(decl: ResourceDecl, path: string, text: string): CompiledFilter {
  if (decl.internal) throw wrongParameter(`$filter: the changes of '${path}' cannot be filtered`)
  try {
    return compiledFilter(decl, text)
  } catch (error) {
    if (error instanceof ApiError) throw new ApiError(error.code, `$filter on ${path}: ${error.message}`)
    throw error
  }
}
