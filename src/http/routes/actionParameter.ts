/*
 * The one value an action that sets something takes (`$setEmail`,
 * `$setUrlPrefix`, `$setNextDocNumberPart`): from the query parameter of
 * that name (`?email=…`, as `$set` takes fields), else from the body, an
 * object with that field (`{"email": …}` in JSON, `<x><email>…</email></x>`
 * in XML). Absent from both: 400 naming the parameter and both ways.
 */
import { wrongParameter } from '../../domain/errors.js'
import { isPlainObject } from '../../domain/input.js'
import { parseBody } from '../body.js'
import type { Call } from '../call.js'

/** The value as given: a string from the query or an XML body, any JSON value from a JSON body. */
function actionParameter(call: Call, action: string, name: string): unknown {
  const fromQuery = call.request.query.get(name)
  if (fromQuery !== undefined) return fromQuery
  const { value } = parseBody(call.request)
  if (isPlainObject(value) && value[name] !== undefined) return value[name]
  throw wrongParameter(`${action} needs ${name}: as the query parameter ?${name}=… or a body {"${name}": …}`)
}

/** The parameter as an integer (a number, or a text of decimal digits); 400 otherwise. */
export function integerParameter(call: Call, action: string, name: string): number {
  const raw = actionParameter(call, action, name)
  const value = typeof raw === 'string' && /^\s*-?\d{1,16}\s*$/.test(raw) ? Number(raw) : raw
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw wrongParameter(`${action}: ${name} must be an integer`)
  return value
}

/** The parameter as a string; 400 otherwise. */
export function stringParameter(call: Call, action: string, name: string): string {
  const raw = actionParameter(call, action, name)
  if (typeof raw !== 'string') throw wrongParameter(`${action}: ${name} must be a string`)
  return raw
}
