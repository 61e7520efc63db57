/*
 * What the public front end reports each answered request to: the request
 * metrics (always), the request log (when REQUEST_LOG is on), and where
 * its request ids come from.
 */
import type { RequestIds } from './requestId.js'
import type { RequestLog } from './requestLog.js'
import type { RequestMetrics } from './requestMetrics.js'

export interface FrontEndObservers {
  readonly requests: RequestMetrics
  readonly requestLog: RequestLog | null
  readonly requestIds: RequestIds
}
