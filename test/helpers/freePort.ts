/*
 * A TCP port free on 127.0.0.1 right now (the OS picks it), for a test that
 * must know a listener's port before the listener starts (an ADMIN_PORT the
 * CLI is told, or polled while a server starts up).
 */
import net from 'node:net'

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address()
      probe.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0))
    })
  })
}
