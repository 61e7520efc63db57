/*
 * What a test process started outside itself (PostgreSQL, which pg_ctl
 * runs as a daemon; HAProxy and node children, which outlive a parent that
 * is killed) must not outlive it. The harnesses register a synchronous
 * stop for each; when the process ends by SIGTERM or SIGINT (tap ends a
 * test file that ran past its timeout with SIGTERM) every registered stop
 * runs, newest first, before the process exits with the signal's code.
 * A normal end runs the harnesses' own teardown instead.
 */

const stops = new Set<() => void>()
let installed = false

const SIGNAL_EXIT_CODES = { SIGTERM: 143, SIGINT: 130 } as const

/** Registers `stop` (synchronous, safe to call twice); the returned function unregisters it. */
export function stopOnSignal(stop: () => void): () => void {
  if (!installed) {
    installed = true
    for (const [signal, code] of Object.entries(SIGNAL_EXIT_CODES)) {
      process.once(signal, () => {
        for (const registered of [...stops].reverse()) {
          try {
            registered()
          } catch (error) {
            console.error(`stopping on ${signal} failed:`, error)
          }
        }
        process.exit(code)
      })
    }
  }
  stops.add(stop)
  return () => stops.delete(stop)
}
