/*
 * GET /v1/changes: the tenant's change feed, as a WebSocket (a request
 * that asks to upgrade) or as Server-Sent Events (Accept:
 * text/event-stream). Everything that can be refused is refused here, as an
 * ordinary error answer before the stream starts: the options (resources,
 * $filter, fields, no_expand, dates: query/changeSelection.ts), `since`
 * (or an EventSource's Last-Event-ID) ahead of the log (400) or older than the log
 * still holds (410 TL01-1111), a request that asks for neither form (406),
 * and one past the limits on subscriptions open at once, per user, tenant
 * and node (429 TL01-9010 with Retry-After: changes/subscriptionLimits.ts,
 * whose place the subscription holds until it ends).
 * Then the subscription (changes/changeSubscription.ts) joins the tenant's
 * feed (tenants/changeFeed.ts): at once, or after reading the log from
 * `since` on.
 */
import { ApiError, wrongParameter } from '../../domain/errors.js'
import type { TenantView } from '../../domain/tx.js'
import { ChangeSelection } from '../../query/changeSelection.js'
import type { ChangeFeed, EventPosition } from '../../tenants/changeFeed.js'
import type { Call } from '../call.js'
import { ChangeSubscription } from '../changes/changeSubscription.js'
import { FEED_CLOSE, type FeedOutlet } from '../changes/feedOutlet.js'
import { EventStreamOutlet } from '../changes/eventStream.js'
import { jsonDateFormOf } from '../jsonDates.js'
import { queryFlag } from '../request.js'
import { requireSession } from '../requireSession.js'
import type { ApiResponse } from '../response.js'

const EVENT_POSITION = /^(\d{1,15})(?:\.(\d{1,9}))?$/

/** `since=<seq>` or `<seq>.<op>`; 400 for anything else. */
function parseSince(text: string | undefined): EventPosition | null {
  if (text === undefined || text.trim() === '') return null
  const match = EVENT_POSITION.exec(text.trim())
  if (match === null) throw wrongParameter(`since: '${text.slice(0, 40)}' is no event id (<seq> or <seq>.<op>, as the events' seq and op give)`)
  const seq = Number(match[1])
  const op = match[2] === undefined ? null : Number(match[2])
  if (op !== null && seq === 0) throw wrongParameter('since: entry 0 has no changes')
  return { seq, op }
}

function formOf(call: Call): 'webSocket' | 'eventStream' {
  const { headers } = call.request
  if (headers.get('upgrade')?.toLowerCase() === 'websocket') return 'webSocket'
  if ((headers.get('accept') ?? '').toLowerCase().includes('text/event-stream')) return 'eventStream'
  throw new ApiError('TL01-9007', 'the change feed is a WebSocket (ask to upgrade) or Server-Sent Events (Accept: text/event-stream)')
}

function checkSince(feed: ChangeFeed, since: EventPosition | null): void {
  if (since === null) return
  const problem = feed.resumeProblem(since)
  if (problem === 'ahead') throw wrongParameter(`since: ${since.seq} is ahead of the tenant's log, which ends at ${feed.publishedSeq}`)
  if (problem === 'gone') {
    throw new ApiError('TL01-1111', `since: the log no longer holds the changes after ${since.seq} (it keeps LOG_RETENTION_MS): reload, then connect without since`)
  }
}

export async function openChanges(call: Call): Promise<ApiResponse> {
  const { request, services } = call
  if (request.inBatch) throw new ApiError('TL01-9007', 'the change feed is no batch item')
  const form = formOf(call)
  const { principal } = requireSession(call)
  const selection = ChangeSelection.parse({
    resources: request.query.get('resources'),
    filter: request.query.get('$filter'),
    fields: request.query.get('fields'),
    noExpand: queryFlag(request, 'no_expand'),
    isoDates: jsonDateFormOf(request) === 'iso',
  })
  const since = parseSince(request.query.get('since') ?? request.headers.get('last-event-id'))
  const actor = services.registry.get(call.tenantName ?? '')
  if (actor === undefined) throw new ApiError('TL01-1005', `there is no account at '${call.tenantName ?? ''}'`)
  checkSince(actor.changes, since)
  const place = services.feedLimits.subscriptions.take(actor.tenant, principal.userId)
  const start = (outlet: FeedOutlet): ChangeSubscription => {
    place.started()
    const subscription = new ChangeSubscription(principal, selection, outlet, services.config.changeFeedMaxBufferedBytes, () => {
      actor.changes.unsubscribe(subscription)
      clearInterval(tokenCheck)
      place.release()
    })
    // A quiet stream's token may expire between events.
    const tokenCheck = setInterval(() => checkStillSignedIn(actor, subscription), TOKEN_CHECK_MS)
    tokenCheck.unref()
    actor.changes.subscribe(subscription, since).catch((error: unknown) => {
      console.error(`request ${request.requestId}: the change feed of '${actor.tenant}' failed to start:`, error)
      subscription.close(FEED_CLOSE.failed)
    })
    return subscription
  }
  if (form === 'webSocket') return { status: 101, headers: {}, body: '', webSocket: start }
  const outlet = new EventStreamOutlet(services.feedLimits.budget)
  const subscription = start(outlet)
  outlet.onEnded = () => subscription.gone()
  return {
    status: 200,
    headers: { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-store', 'X-Accel-Buffering': 'no' },
    body: outlet.body(),
  }
}

/** How often a stream checks that its token still signs its user in, events or not. */
const TOKEN_CHECK_MS = 15_000

/** What the token check reads of the tenant: whether it rests, else its state as the domain's view. */
interface CheckedTenant {
  readonly resting: boolean
  readonly state: TenantView
}

function checkStillSignedIn(actor: CheckedTenant, subscription: ChangeSubscription): void {
  if (subscription.closed || actor.resting) return
  try {
    if (!subscription.stillSignedIn(actor.state, Date.now())) subscription.close(FEED_CLOSE.accessLost)
  } catch {
    // The tenant left this node: the feed ends the subscription itself.
  }
}
