/*
 * The idle sweep: every quarter of IDLE_EVICT_MS (at most once a minute)
 * an unref'd timer looks for tenants unused for IDLE_EVICT_MS and puts them
 * to rest one after another (TenantRegistry.evict re-checks idleness inside
 * the tenant's exclusive job). A sweep never overlaps the previous one.
 */
import type { TenantRegistry } from './tenantRegistry.js'

const MAX_SWEEP_INTERVAL_MS = 60_000
const MIN_SWEEP_INTERVAL_MS = 10

export interface IdleSweeper {
  /** Runs one sweep now; resolves with the tenants put to rest. */
  sweep(): Promise<string[]>
  stop(): void
}

export function startIdleSweeper(registry: TenantRegistry, idleEvictMs: number): IdleSweeper {
  let running: Promise<string[]> | null = null
  const sweepOnce = async (): Promise<string[]> => {
    const evicted: string[] = []
    const now = Date.now()
    const idle = [...registry.active()].filter((actor) => actor.waiting === 0 && now - actor.lastUsedMs >= idleEvictMs)
    for (const actor of idle) {
      try {
        if (await registry.evict(actor.tenant, idleEvictMs)) evicted.push(actor.tenant)
      } catch (error) {
        console.error(`evicting idle tenant '${actor.tenant}' failed:`, error)
      }
    }
    return evicted
  }
  const sweep = (): Promise<string[]> => {
    if (running !== null) return running
    const started = sweepOnce().finally(() => {
      running = null
    })
    running = started
    return started
  }
  if (idleEvictMs === 0) return { sweep: async () => [], stop: () => undefined }
  const intervalMs = Math.min(MAX_SWEEP_INTERVAL_MS, Math.max(MIN_SWEEP_INTERVAL_MS, Math.floor(idleEvictMs / 4)))
  const timer = setInterval(() => void sweep(), intervalMs)
  timer.unref()
  return { sweep, stop: () => clearInterval(timer) }
}
