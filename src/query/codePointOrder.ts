/*
 * Strings in code point order (as `$filter` and `$orderby` promise), not in
 * the UTF-16 code unit order of JavaScript's `<`.
 *
 * The two orders agree everywhere except where a character above the BMP
 * (stored as a surrogate pair, units 0xD800..0xDFFF) meets a BMP character
 * of 0xE000..0xFFFF: by code unit the surrogate sorts first, by code point
 * it sorts last. So the strings are walked unit by unit, without building
 * anything, and at the first difference both units are moved to a rank in
 * which surrogates sort above 0xE000..0xFFFF. A unit after the first
 * difference never matters, and the rank keeps every other order, so this
 * is exactly code point order (for lone surrogates too, as a total order).
 */

const SURROGATE_FIRST = 0xd800
const SURROGATE_LAST = 0xdfff

/** The unit's place in code point order: 0xE000..0xFFFF move down by 0x800, surrogates up to 0xF800..0xFFFF. */
function rank(unit: number): number {
  if (unit < SURROGATE_FIRST) return unit
  if (unit <= SURROGATE_LAST) return unit + 0x2000
  return unit - 0x800
}

/** -1, 0 or 1 as `a` sorts before, with or after `b` by code point. */
export function compareCodePoints(a: string, b: string): number {
  const shorter = Math.min(a.length, b.length)
  for (let index = 0; index < shorter; index += 1) {
    const x = a.charCodeAt(index)
    const y = b.charCodeAt(index)
    if (x !== y) return rank(x) < rank(y) ? -1 : 1
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1
}
