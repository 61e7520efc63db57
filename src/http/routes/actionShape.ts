/*
 * The shape an action's call must have: on the collection (`/{path}/$name`)
 * or on one object (`/{path}/{id}/$name`), with one of the action's methods.
 * The wrong place is 404 TL01-9003 (no such path), the wrong method 405
 * TL01-9004 with `Allow`, as for every other path.
 */
import { ApiError } from '../../domain/errors.js'
import type { Call } from '../call.js'

/** Refuses a call of `name` that is not on the collection (`id` null). */
export function onCollectionOnly(call: Call, name: string, id: string | null, methods: readonly string[]): void {
  if (id !== null) throw new ApiError('TL01-9003', `${name} is called on the collection, not on one object`)
  checkMethod(call, methods)
}

/** Refuses a call of `name` that is not on one object; the object's id. */
export function onObjectOnly(call: Call, name: string, id: string | null, methods: readonly string[]): string {
  if (id === null) throw new ApiError('TL01-9003', `${name} is called on one object: …/{id}/${name}`)
  checkMethod(call, methods)
  return id
}

function checkMethod(call: Call, methods: readonly string[]): void {
  const { method } = call.request
  if (!methods.includes(method)) throw new ApiError('TL01-9004', `${method} is not allowed here; use ${methods.join(', ')}`, null, [], { Allow: methods.join(', ') })
}
