/*
 * The method a request is routed as: a client that can send only GET and
 * POST (an HTML form, JSONP) names PUT, PATCH or DELETE in the `method`
 * query parameter; any other method, or another name, is taken as sent.
 */

const OVERRIDABLE = new Set(['PUT', 'PATCH', 'DELETE'])

/** The method the request is routed as: `?method=` on a GET or POST when it names PUT, PATCH or DELETE, else the one sent. */
export function overriddenMethod(sentMethod: string, query: ReadonlyMap<string, string>): string {
  const override = query.get('method')?.toUpperCase()
  return override !== undefined && OVERRIDABLE.has(override) && (sentMethod === 'POST' || sentMethod === 'GET') ? override : sentMethod
}
