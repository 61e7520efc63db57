/*
 * A tenant's `GET /v1/users/@self`, one request after another over a
 * connection of its own, until stopped: the longest answer is the longest a
 * request to that tenant waited (for the event loop, held by another
 * tenant's work, or for the tenant itself, held by a job). The benchmarks
 * of imports and of a large tenant's lifecycle read their stalls with it.
 */
import { BenchClient, withQuery } from './httpClient.js'

/** Starts polling; the function it answers stops it and gives the longest answer (ms) and the requests made. `statuses`: the answers expected. */
export function pollSelf(port: number, tenant: string, token: string, pauseMs: number, statuses: readonly number[] = [200]): () => Promise<{ longestMs: number; count: number }> {
  const client = new BenchClient(port)
  let running = true
  let longestMs = 0
  let count = 0
  const loop = (async () => {
    while (running) {
      const answer = await client.request('GET', withQuery('/v1/users/@self', { token }), { tenant })
      if (!statuses.includes(answer.status)) throw new Error(`GET users/@self of ${tenant} answered ${answer.status} ${answer.text}`)
      longestMs = Math.max(longestMs, answer.ms)
      count += 1
      if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs))
    }
  })()
  return async () => {
    running = false
    try {
      await loop
    } finally {
      client.close()
    }
    return { longestMs, count }
  }
}
