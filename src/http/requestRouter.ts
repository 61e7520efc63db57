/*
 * The router's entry (router.ts `route`) as a type. The router hands it to
 * every fixed route's handler, so that a handler which routes requests of
 * its own — a batch, its items — needs no import of the router, which
 * imports the route table, which imports the handlers.
 */
import type { MaybePromise } from '../maybePromise.js'
import type { Services, TenantAccess } from './call.js'
import type { ApiRequest } from './request.js'
import type { ApiResponse } from './response.js'

/** Answers a request, never throwing; `access` replaces the tenant's actor (a batch's shared transaction). */
export type RequestRouter = (services: Services, request: ApiRequest, access?: TenantAccess) => MaybePromise<ApiResponse>
