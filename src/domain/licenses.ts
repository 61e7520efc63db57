/*
 * Licences: an Access gives a user one product (CORE, TIME or BILLING, the
 * values the Access declaration's Enum lists), and Account.licenseLimit caps
 * the accesses of each product (null: no cap). Accesses beyond the cap are
 * the later ones, by createdAt then id: those are `@exceeded`, and they do
 * not give their product. Everything here is worked out from the live
 * (untrashed) accesses when asked, by the views and the access calls
 * (`accesses/product/{product}/$free`, `products/$allowed`).
 */
import { assertionFailed } from '../assert.js'
import { findAccount } from './account.js'
import type { Rec } from './record.js'
import { Access } from './resources/access.js'
import type { StateView } from './tx.js'

/** The products an access may name, in the declaration's order. */
export const PRODUCTS: readonly string[] = (() => {
  for (const constraint of Access.fieldsByName.get('product')?.constraints ?? []) if (constraint.type === 'Enum') return constraint.values
  return assertionFailed('Access.product declares no Enum of products')
})()

/** The seats of one product: the cap, the live accesses, the seats left (null: no cap). */
export interface ProductSeats {
  product: string
  licenseLimit: number | null
  used: number
  free: number | null
}

function licenseLimitOf(state: StateView): number | null {
  const limit = findAccount(state)?.licenseLimit
  return typeof limit === 'number' ? limit : null
}

/** Creation order: createdAt, then id. */
function byCreation(a: Rec, b: Rec): number {
  return a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
}

/** The live accesses of a product, oldest first. */
function liveAccessesOf(state: StateView, product: string): Rec[] {
  const accesses: Rec[] = []
  for (const access of state.collection(Access.type).lookup('product', product)) if (access.trashItem === null) accesses.push(access)
  return accesses.sort(byCreation)
}

/** Accesses beyond the account's licenseLimit per product: the later ones (by createdAt, then id). */
export function exceededAccessIds(state: StateView): Set<string> {
  const exceeded = new Set<string>()
  const limit = licenseLimitOf(state)
  if (limit === null) return exceeded
  for (const product of PRODUCTS) {
    for (const access of liveAccessesOf(state, product).slice(Math.max(0, limit))) exceeded.add(access.id)
  }
  return exceeded
}

export function productSeats(state: StateView, product: string): ProductSeats {
  const licenseLimit = licenseLimitOf(state)
  const used = liveAccessesOf(state, product).length
  return { product, licenseLimit, used, free: licenseLimit === null ? null : Math.max(0, licenseLimit - used) }
}

/** The products the user's live accesses within the caps give, in the declaration's order. */
export function allowedProducts(state: StateView, userId: string): string[] {
  const exceeded = exceededAccessIds(state)
  const allowed = new Set<string>()
  for (const access of state.collection(Access.type).lookup('user', userId)) {
    if (access.trashItem === null && !exceeded.has(access.id) && typeof access.product === 'string') allowed.add(access.product)
  }
  return PRODUCTS.filter((product) => allowed.has(product))
}
