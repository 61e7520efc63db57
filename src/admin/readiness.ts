/*
 * Whether the service is ready for traffic: not before start-up work is
 * done (LMDB open, listeners up, and with RECOVER_ON_START every tenant
 * activated), and no longer once a stop has begun. /readyz reports it.
 */

export type ReadinessPhase = 'starting' | 'ready' | 'stopping'

export class Readiness {
  private current: ReadinessPhase = 'starting'

  get phase(): ReadinessPhase {
    return this.current
  }

  get ready(): boolean {
    return this.current === 'ready'
  }

  markReady(): void {
    if (this.current === 'starting') this.current = 'ready'
  }

  markStopping(): void {
    this.current = 'stopping'
  }
}
