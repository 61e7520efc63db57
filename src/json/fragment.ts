/*
 * JSON text carried inside a value that is still to be serialized: a
 * rendered record whose JSON was made once and is copied into every
 * answer that shows it (domain/renderedJson.ts).
 *
 * JSON.stringify has no way to take text as it is in Node 20, so a
 * fragment stands in the output as a marker: `stringifyWithFragments`
 * runs JSON.stringify while each fragment's toJSON records the fragment
 * and returns FRAGMENT_MARKER. toJSON is called in the order the output is
 * written, so the n-th marker in the text is the n-th fragment recorded,
 * and the writer (bytes.ts) copies the fragment's bytes in
 * its place. The marker is a string value, so in the text it is always a
 * whole JSON string (FRAGMENT_MARKER_JSON, quotes included). The same text
 * appears only for a string value or key that is exactly the marker; the
 * writer then finds more markers than fragments and writes the value
 * again through `stringifyResolvingFragments`, which puts each fragment's
 * value in place of its marker.
 *
 * Outside these two functions toJSON fails an assertion: a fragment can
 * reach an answer only through the writer.
 */
import { assertionFailed } from '../assert.js'

/** What a fragment is written as first; unlikely in data, and checked for anyway. */
export const FRAGMENT_MARKER = '\u0000JsonFragment\u0000'
export const FRAGMENT_MARKER_JSON = JSON.stringify(FRAGMENT_MARKER)

/** The fragments met by the running stringifyWithFragments, in output order; null when none runs. */
let met: JsonFragment[] | null = null

/** JSON text ready to be copied into an answer. */
export class JsonFragment {
  constructor(readonly bytes: Buffer) {}

  toJSON(): string {
    if (met === null) assertionFailed('a JsonFragment is serialized only through stringifyWithFragments')
    met.push(this)
    return FRAGMENT_MARKER
  }

  /** The value the text stands for. */
  value(): unknown {
    return JSON.parse(this.bytes.toString('utf8'))
  }
}

/** JSON.stringify(value), each fragment written as FRAGMENT_MARKER_JSON; the fragments in the order of their markers. */
export function stringifyWithFragments(value: unknown): { text: string; fragments: JsonFragment[] } {
  met = []
  try {
    return { text: JSON.stringify(value), fragments: met }
  } finally {
    met = null
  }
}

/** JSON.stringify(value) with each fragment's value in its place (slow: for text in which a marker is ambiguous). */
export function stringifyResolvingFragments(value: unknown): string {
  met = []
  try {
    return JSON.stringify(value, function (this: Record<string, unknown>, key: string, written: unknown) {
      const original = this[key]
      return original instanceof JsonFragment ? original.value() : written
    })
  } finally {
    met = null
  }
}
