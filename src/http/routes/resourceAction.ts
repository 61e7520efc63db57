/*
 * What a resource action is to the router: a handler of
 * `/{path}/{id}/${name}`, `/{path}/${name}` (also inside an inner collection), or of what a method means for
 * one resource (DELETE on the trash, POST on secret keys). The action files
 * export theirs; actions.ts registers them under resource type and name, and
 * resources.ts finds them there, so no action file depends on resources.ts.
 */
import type { ResourceDecl } from '../../domain/schema.js'
import type { ParentLink } from '../../query/plan.js'
import type { Call } from '../call.js'
import type { ApiResponse } from '../response.js'

export interface ResourceAction {
  /**
   * `id` is null for an action on the collection. `within` is set when the collection is an inner one
   * (`time/users/{id}/timerecords/$unbilled`): the parent its records belong to (the object `id` names, if any,
   * was found among them).
   */
  handle(call: Call, decl: ResourceDecl, id: string | null, within?: ParentLink | null): Promise<ApiResponse>
}
