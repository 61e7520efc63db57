/*
 * The 405 answer: a method the path does not take, with the `Allow` header
 * naming the ones it does (RFC 9110 §15.5.6). The router raises it for a
 * fixed route, the resource routes for a collection, an object or an
 * operation on it.
 */
import { ApiError } from '../../domain/errors.js'

export class MethodNotAllowed extends ApiError {
  constructor(method: string, allowed: readonly string[]) {
    super('TL01-9004', `${method} is not allowed here; use ${allowed.join(', ')}`, null, [], { Allow: allowed.join(', ') })
  }
}
