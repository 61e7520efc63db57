/*
 * GET /metrics on the admin listener: the Prometheus text format, built at
 * scrape time from counters the hot paths keep as plain numbers (request
 * metrics of the front end, group-commit figures of the log store) and
 * from what the registry knows about its tenants. Per-tenant series cover
 * only tenants in memory. Metric names are listed in the README
 * ("Observability").
 */
import fs from 'node:fs'
import type { TenantActor } from '../tenants/tenantActor.js'
import type { TenantRegistry } from '../tenants/tenantRegistry.js'
import { PROMETHEUS_CONTENT_TYPE, PrometheusText } from '../observability/prometheusText.js'
import type { RequestMetrics } from '../observability/requestMetrics.js'
import type { Storage } from '../persist/ports.js'
import type { AdminServer } from './adminServer.js'

export interface MetricSources {
  readonly requests: RequestMetrics
  readonly registry: TenantRegistry
  readonly store: Storage
  /** Cluster mode: this node's leases, forwards and claims; null embedded. */
  readonly cluster?: ClusterCounters | null
  /** The webhooks' delivery counters (webhooks/webhookDeliverer.ts). */
  readonly webhooks?: WebhookCounters | null
  /** The change feed's subscriptions and the bytes waiting for them (http/changes/feedLimits.ts). */
  readonly feeds?: FeedCounters | null
}

/** What /metrics shows of the change feed's streams on this node. */
interface FeedCounters {
  readonly open: number
  readonly refused: number
  readonly bufferedBytes: number
  readonly budgetCuts: number
}

function feedFamilies(text: PrometheusText, feeds: FeedCounters): void {
  const family = (name: string, type: 'gauge' | 'counter', help: string, value: number) => text.family(name, type, help).sample(name, {}, value)
  family('timeledger_change_feed_subscriptions', 'gauge', 'Change feed subscriptions (WebSocket and event stream) open on this node.', feeds.open)
  family('timeledger_change_feed_refusals_total', 'counter', 'Change feed requests refused 429 at a CHANGE_FEED_MAX_SUBSCRIPTIONS_* limit since start.', feeds.refused)
  family('timeledger_change_feed_buffered_bytes', 'gauge', 'Bytes waiting for all change feed streams of this node (their budget is CHANGE_FEED_MAX_BUFFERED_BYTES_PER_NODE).', feeds.bufferedBytes)
  family(
    'timeledger_change_feed_budget_cuts_total',
    'counter',
    'Change feed streams cut (4409) since start because all streams together held more than CHANGE_FEED_MAX_BUFFERED_BYTES_PER_NODE.',
    feeds.budgetCuts,
  )
}

/** What /metrics shows of a cluster node (cluster/clusterNode.ts): its leases, forwards and claims. */
interface ClusterCounters {
  readonly nodeId: string
  readonly keeper: { readonly count: number; readonly renewalFailures: number; readonly lost: number }
  readonly placement: { readonly claims: number; readonly takeovers: number }
  readonly forwarder: { readonly forwards: number; readonly failures: number }
}

/** What /metrics shows of the webhooks' deliveries. */
interface WebhookCounters {
  readonly delivered: number
  readonly failedAttempts: number
  readonly failedEvents: number
}

function webhookFamilies(text: PrometheusText, webhooks: WebhookCounters): void {
  text.family('timeledger_webhook_deliveries_total', 'counter', 'Webhook events delivered (the receiver answered 2xx) since start.')
  text.sample('timeledger_webhook_deliveries_total', {}, webhooks.delivered)
  text.family('timeledger_webhook_failed_attempts_total', 'counter', 'Webhook delivery attempts that failed (non-2xx, network error, time limit) since start.')
  text.sample('timeledger_webhook_failed_attempts_total', {}, webhooks.failedAttempts)
  text.family('timeledger_webhook_failed_events_total', 'counter', 'Webhook events given up after WEBHOOK_RETRY_LIMIT_MS since start.')
  text.sample('timeledger_webhook_failed_events_total', {}, webhooks.failedEvents)
}

/** When the snapshot a tenant was loaded from was written, for tenants that took none since (file time, read once). */
const loadedSnapshotAt = new WeakMap<TenantActor, number | null>()

function snapshotAtMs(actor: TenantActor): number | null {
  if (actor.lastSnapshotAt !== null) return actor.lastSnapshotAt
  let at = loadedSnapshotAt.get(actor)
  if (at === undefined) {
    const file = actor.lastRecovery.snapshotFile
    at = file === null ? null : (fs.statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? null)
    loadedSnapshotAt.set(actor, at)
  }
  return at
}

function requestFamilies(text: PrometheusText, requests: RequestMetrics): void {
  const all = [...requests.stats()]
  text.family('timeledger_http_requests_total', 'counter', 'Requests answered by the public listener, by route pattern, method and status (499: the client went away).')
  for (const stats of all) {
    for (const [status, count] of Object.entries(stats.byStatus)) {
      text.sample('timeledger_http_requests_total', { route: stats.label.route, scope: stats.label.scope, method: stats.method, status }, count)
    }
  }
  text.family('timeledger_http_request_duration_seconds', 'histogram', 'Time from receiving a request to writing its answer.')
  for (const stats of all) {
    text.histogram('timeledger_http_request_duration_seconds', { route: stats.label.route, scope: stats.label.scope, method: stats.method }, stats.latencySeconds)
  }
}

function tenantFamilies(text: PrometheusText, registry: TenantRegistry, nowMs: number): void {
  const actors = [...registry.active()]
  let waiting = 0
  let deepest = 0
  for (const actor of actors) {
    waiting += actor.waiting
    deepest = Math.max(deepest, actor.waiting)
  }
  text.family('timeledger_tenants_in_memory', 'gauge', 'Tenants whose state is in memory.').sample('timeledger_tenants_in_memory', {}, registry.activeCount)
  text.family('timeledger_tenant_evictions_total', 'counter', 'Tenants put to rest (idle or past MAX_ACTIVE_TENANTS) since start.').sample('timeledger_tenant_evictions_total', {}, registry.evictions)
  text.family('timeledger_tenant_recovery_failures_total', 'counter', 'Tenant recoveries that failed (damaged snapshot or log) since start; each closes its tenant until a restore.')
  text.sample('timeledger_tenant_recovery_failures_total', {}, registry.closed.failedRecoveries)
  text.family('timeledger_tenants_closed', 'gauge', 'Tenants closed because they could not be recovered (their requests get 503 until a restore).')
  text.sample('timeledger_tenants_closed', {}, registry.closed.all.size)
  text.family('timeledger_mailbox_waiting_requests', 'gauge', "Requests waiting for a tenant's exclusive job (batch, restore, eviction), over all tenants.")
  text.sample('timeledger_mailbox_waiting_requests', {}, waiting)
  text.family('timeledger_mailbox_waiting_requests_max', 'gauge', 'The longest single tenant mailbox.').sample('timeledger_mailbox_waiting_requests_max', {}, deepest)
  text.family('timeledger_tenant_log_entries_since_snapshot', 'gauge', 'Log entries a restart would replay for the tenant (tenants in memory).')
  for (const actor of actors) text.sample('timeledger_tenant_log_entries_since_snapshot', { tenant: actor.tenant }, actor.logEntriesSinceSnapshot)
  text.family('timeledger_tenant_snapshot_age_seconds', 'gauge', "Age of the tenant's newest snapshot (tenants in memory that have one).")
  for (const actor of actors) {
    const at = snapshotAtMs(actor)
    if (at !== null) text.sample('timeledger_tenant_snapshot_age_seconds', { tenant: actor.tenant }, Math.max(0, (nowMs - at) / 1000))
  }
}

function logFamilies(text: PrometheusText, store: Storage): void {
  const { commitStats } = store
  text.family('timeledger_log_entries', 'gauge', 'Log entries held in LMDB over all tenants (entries covered by a snapshot are pruned after LOG_RETENTION_MS).')
  text.sample('timeledger_log_entries', {}, store.logEntryCount())
  text.family('timeledger_log_commit_entries', 'histogram', 'Log entries per LMDB commit (group commit size).')
  text.histogram('timeledger_log_commit_entries', {}, commitStats.entriesPerCommit)
  text.family('timeledger_log_flush_duration_seconds', 'histogram', "Time from a commit's first entry being queued to the commit being flushed to disk.")
  text.histogram('timeledger_log_flush_duration_seconds', {}, commitStats.flushSeconds)
  text.family('timeledger_snapshots_corrupt_total', 'counter', 'Snapshot files found corrupt since start, each counted once: skipped by a recovery or set aside by pruning.')
  text.sample('timeledger_snapshots_corrupt_total', {}, store.snapshots.faults.count)
}

function clusterFamilies(text: PrometheusText, node: ClusterCounters): void {
  const { keeper, placement, forwarder } = node
  const counter = (name: string, help: string, value: number) => text.family(name, 'counter', help).sample(name, {}, value)
  text.family('timeledger_cluster_node_info', 'gauge', "This node's id in the cluster (always 1).").sample('timeledger_cluster_node_info', { node: node.nodeId }, 1)
  text.family('timeledger_cluster_leases_held', 'gauge', 'Tenant leases this node holds.').sample('timeledger_cluster_leases_held', {}, keeper.count)
  counter('timeledger_cluster_forwards_total', 'Requests forwarded to the node holding their tenant since start.', forwarder.forwards)
  counter('timeledger_cluster_forward_failures_total', 'Forwards that reached no node (answered 503 with Retry-After).', forwarder.failures)
  counter('timeledger_cluster_claims_total', 'Tenant leases claimed by this node since start.', placement.claims)
  counter('timeledger_cluster_takeovers_total', 'Claims of a tenant whose lease another node held before (epoch above 1).', placement.takeovers)
  counter('timeledger_cluster_lease_renewal_failures_total', 'Lease renewals that failed (the database unreachable).', keeper.renewalFailures)
  counter('timeledger_cluster_leases_lost_total', "Leases lost: taken over by another node, or run out by this node's clock.", keeper.lost)
}

function processFamilies(text: PrometheusText): void {
  const memory = process.memoryUsage()
  text.family('process_resident_memory_bytes', 'gauge', 'Resident set size.').sample('process_resident_memory_bytes', {}, memory.rss)
  text.family('nodejs_heap_size_used_bytes', 'gauge', 'V8 heap in use.').sample('nodejs_heap_size_used_bytes', {}, memory.heapUsed)
  text.family('nodejs_heap_size_total_bytes', 'gauge', 'V8 heap reserved.').sample('nodejs_heap_size_total_bytes', {}, memory.heapTotal)
  text.family('nodejs_external_memory_bytes', 'gauge', 'Memory of C++ objects bound to JavaScript (buffers).').sample('nodejs_external_memory_bytes', {}, memory.external)
  text.family('process_start_time_seconds', 'gauge', 'Start time of the process, seconds since the epoch.')
  text.sample('process_start_time_seconds', {}, Math.round((Date.now() - process.uptime() * 1000) / 1000))
}

function renderMetrics(sources: MetricSources): string {
  const text = new PrometheusText()
  requestFamilies(text, sources.requests)
  tenantFamilies(text, sources.registry, Date.now())
  logFamilies(text, sources.store)
  if (sources.cluster != null) clusterFamilies(text, sources.cluster)
  if (sources.webhooks != null) webhookFamilies(text, sources.webhooks)
  if (sources.feeds != null) feedFamilies(text, sources.feeds)
  processFamilies(text)
  return text.toString()
}

export function registerMetricsRoute(admin: AdminServer, sources: MetricSources): void {
  admin.route('GET', '/metrics', () => ({ status: 200, headers: { 'Content-Type': PROMETHEUS_CONTENT_TYPE }, body: renderMetrics(sources) }))
}
