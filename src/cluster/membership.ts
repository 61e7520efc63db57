/*
 * Membership (ARCHITECTURE.md §8): each node registers itself in the nodes table at
 * start (id, the URL of its internal listener) and beats its heartbeat
 * there every third of the lease time. The other nodes read the table to
 * find where a lease's owner listens. A lookup of an owner not seen yet
 * waits for a read of the table that starts after it was asked (a node
 * registers before it claims any lease, so that read names the owner unless
 * it is gone for good); lookups that miss together share one read, and two
 * reads start at least REFRESH_MIN_MS apart.
 */
import type { ClusterStore, NodeRow } from './clusterStore.js'

/** Least time between two reads of the nodes table for an owner not found. */
const REFRESH_MIN_MS = 200

export class Membership {
  private known = new Map<string, NodeRow>()
  /** When the read that `known` holds started (performance.now()). */
  private readStartedAtMs = 0
  /** The next read of the table, while one is waited for or under way. */
  private rereading: Promise<void> | null = null
  private timer: NodeJS.Timeout | null = null
  /** Heartbeats that failed since start (/metrics). */
  heartbeatFailures = 0

  constructor(
    private readonly store: Pick<ClusterStore, 'registerNode' | 'heartbeat' | 'nodes'>,
    readonly nodeId: string,
    private readonly heartbeatEveryMs: number,
  ) {}

  /** Registers this node, reachable at `internalUrl`, and starts its heartbeat. */
  async join(internalUrl: string): Promise<void> {
    await this.store.registerNode(internalUrl)
    await this.refresh()
    this.timer = setInterval(() => {
      this.store.heartbeat().catch((error: unknown) => {
        this.heartbeatFailures += 1
        console.error(`node '${this.nodeId}': heartbeat failed:`, error instanceof Error ? error.message : error)
      })
    }, this.heartbeatEveryMs)
    this.timer.unref()
  }

  leave(): void {
    if (this.timer !== null) clearInterval(this.timer)
    this.timer = null
  }

  /** The internal URL of a node; undefined when the nodes table does not name it. */
  async urlOf(nodeId: string): Promise<string | undefined> {
    const known = this.known.get(nodeId)
    if (known !== undefined) return known.internalUrl
    const askedAtMs = performance.now()
    while (this.readStartedAtMs <= askedAtMs) await this.reread()
    return this.known.get(nodeId)?.internalUrl
  }

  /** One read of the table shared by the lookups that wait for it, REFRESH_MIN_MS after the previous one. */
  private reread(): Promise<void> {
    this.rereading ??= (async () => {
      const waitMs = this.readStartedAtMs + REFRESH_MIN_MS - performance.now()
      if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs))
      await this.refresh()
    })().finally(() => {
      this.rereading = null
    })
    return this.rereading
  }

  private async refresh(): Promise<void> {
    const startedAtMs = performance.now()
    const nodes = await this.store.nodes()
    this.readStartedAtMs = startedAtMs
    this.known = new Map(nodes.map((node) => [node.id, node]))
  }
}
