/*
 * The licence calls of the original service (the rules in domain/licenses.ts), all GET:
 *
 *   accesses/product/{product}/$free                  {product, licenseLimit, used, free}: the product's seats
 *                                                     (free null when the account sets no licenseLimit)
 *   accesses/products/$allowed                        {products: [...]}: what the caller's accesses give
 *   users/{id}/accesses/product/{product}/$free       the seats, and `granted`: whether that user holds one
 *   users/{id}/accesses/products/$allowed             what that user's accesses give
 *   users/{id}/accesses/@exceeded                     that user's accesses beyond the cap (a list, with
 *                                                     every list option)
 *
 * `{product}` is CORE, TIME or BILLING in any case (400 otherwise); `{id}`
 * a user the caller sees, or `@self`. `users/{id}/accesses` itself is the
 * User declaration's inner collection (generic: list, $count, POST).
 */
import { wrongParameter } from '../../domain/errors.js'
import { allowedProducts, exceededAccessIds, PRODUCTS, productSeats } from '../../domain/licenses.js'
import { findVisible } from '../../domain/operations/findVisible.js'
import { renderList } from '../../domain/render.js'
import { Access } from '../../domain/resources/access.js'
import { User } from '../../domain/resources/user.js'
import { isSelfAlias } from '../../domain/selfAlias.js'
import type { TenantView } from '../../domain/tx.js'
import { planList } from '../../query/plan.js'
import type { Call, Principal } from '../call.js'
import { queryFlag } from '../request.js'
import { requireSession } from '../requireSession.js'
import { dataResponse, type ApiResponse } from '../response.js'

type Params = Record<string, string>

const SEATS_XML = { root: 'productSeats' }
const ALLOWED_XML = { root: 'allowedProducts', item: 'product' }

function productParam(params: Params): string {
  const product = (params.product ?? '').toUpperCase()
  if (!PRODUCTS.includes(product)) throw wrongParameter(`product must be one of ${PRODUCTS.join(', ')} (it is '${params.product ?? ''}')`)
  return product
}

/** The user the path names (its id or `@self`), visible to the caller; 404 otherwise. */
function namedUserId(state: TenantView, principal: Principal, params: Params): string {
  const id = params.id ?? ''
  return isSelfAlias(User.type, id) ? principal.userId : findVisible(state, principal, User, id).id
}

export async function productFree(call: Call, params: Params): Promise<ApiResponse> {
  const { tenant } = requireSession(call)
  const product = productParam(params)
  return tenant.read((state) => dataResponse(call.request, productSeats(state, product), SEATS_XML))
}

export async function userProductFree(call: Call, params: Params): Promise<ApiResponse> {
  const { tenant, principal } = requireSession(call)
  const product = productParam(params)
  return tenant.read((state) => {
    const userId = namedUserId(state, principal, params)
    const seats = Object.assign(productSeats(state, product), { granted: allowedProducts(state, userId).includes(product) })
    return dataResponse(call.request, seats, SEATS_XML)
  })
}

export async function ownAllowedProducts(call: Call): Promise<ApiResponse> {
  const { tenant, principal } = requireSession(call)
  return tenant.read((state) => dataResponse(call.request, { products: allowedProducts(state, principal.userId) }, ALLOWED_XML))
}

export async function userAllowedProducts(call: Call, params: Params): Promise<ApiResponse> {
  const { tenant, principal } = requireSession(call)
  return tenant.read((state) => dataResponse(call.request, { products: allowedProducts(state, namedUserId(state, principal, params)) }, ALLOWED_XML))
}

export async function userExceededAccesses(call: Call, params: Params): Promise<ApiResponse> {
  const { tenant, principal } = requireSession(call)
  const plan = planList(Access, call.request.query)
  return tenant.read((state) => {
    const userId = namedUserId(state, principal, params)
    const exceeded = exceededAccessIds(state)
    const recs = plan.run(state, principal, { kind: 'view', accepts: (rec) => rec.user === userId && exceeded.has(rec.id), pin: () => ({ field: 'user', values: [userId] }) })
    const out = renderList(Access, recs, state, { noExpand: queryFlag(call.request, 'no_expand') })
    return dataResponse(call.request, out, { root: Access.xmlListName, item: Access.xmlItemName })
  })
}
