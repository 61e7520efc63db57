/*
 * A value now, or a promise of it. A read is answered synchronously when
 * nothing makes it wait: the tenant is active and idle and everything it
 * shows is already durable. Each step of its path then returns its value
 * directly, and only a step that must wait returns a promise. An async
 * function would answer through the microtask queue in every case: a few
 * promise jobs per step, more than the microsecond a GET of one object
 * spends on its own work. `andThen` keeps a synchronous chain synchronous.
 *
 * A step that fails synchronously throws; one that fails later rejects.
 * Whoever ends a chain (the router) handles both.
 */
export type MaybePromise<T> = T | Promise<T>

/** `next(value)` at once when `value` is here, else once it is. */
export function andThen<T, U>(value: MaybePromise<T>, next: (value: T) => MaybePromise<U>): MaybePromise<U> {
  return value instanceof Promise ? value.then(next) : next(value)
}
