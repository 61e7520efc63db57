/*
 * A TCP proxy a test puts between a client and a server so that it can
 * break the network between them on purpose, as a partition or a failover
 * would: the randomized fault test (test/cluster/nemesis.test.ts) runs one
 * between each TimeLedger node and PostgreSQL, the node's DATABASE_URL
 * naming the proxy.
 *
 *   cut()        drops every established connection (a TCP reset to both
 *                sides: the server ends the session's transaction, the
 *                client sees its connection lost) and resets every new one
 *                at once, until heal(): the node cannot reach the database.
 *   heal()       new connections are forwarded again.
 *   retarget()   new connections go to another server from now on, and the
 *                established ones (to the old server) are dropped: the
 *                nodes follow a promoted standby without knowing its
 *                address, as behind a virtual IP or a DNS name that moved.
 *
 * Each connection is piped both ways as it comes; nothing is held back or
 * reordered, so a connection that survives is an ordinary TCP connection.
 */
import net from 'node:net'

export interface TcpProxy {
  /** The loopback port the proxy listens on. */
  readonly port: number
  /** Where new connections go. */
  readonly targetPort: number
  /** Whether cut() is in force. */
  readonly isCut: boolean
  /** Connections forwarded since start, and those reset by cut() or refused while cut. */
  readonly stats: { forwarded: number; dropped: number; refused: number }
  cut(): void
  heal(): void
  retarget(port: number): void
  close(): Promise<void>
}

interface Pair {
  readonly client: net.Socket
  readonly server: net.Socket
}

function reset(socket: net.Socket): void {
  if (socket.destroyed) return
  // A socket whose end was already sent (pipe() ends it when the other side ends) is destroyed plainly: a reset
  // racing its pending shutdown leaves the handle open at exit, and the process never ends (Node 20, 24).
  if (socket.writableEnded) socket.destroy()
  // A reset, not a polite FIN: what a peer that vanished from the network leaves behind once anything is sent.
  else socket.resetAndDestroy()
}

/** Starts a proxy on a free loopback port, forwarding to 127.0.0.1:`targetPort`. */
export async function startTcpProxy(targetPort: number): Promise<TcpProxy> {
  let target = targetPort
  let isCut = false
  const pairs = new Set<Pair>()
  const stats = { forwarded: 0, dropped: 0, refused: 0 }
  const dropAll = () => {
    for (const pair of pairs) {
      stats.dropped += 1
      reset(pair.client)
      reset(pair.server)
    }
    pairs.clear()
  }
  const server = net.createServer((client) => {
    client.on('error', () => undefined)
    if (isCut) {
      stats.refused += 1
      reset(client)
      return
    }
    stats.forwarded += 1
    const upstream = net.connect(target, '127.0.0.1')
    upstream.on('error', () => undefined)
    const pair = { client, server: upstream }
    pairs.add(pair)
    const end = () => {
      pairs.delete(pair)
      reset(client)
      reset(upstream)
    }
    // Either side closing or failing (a refused upstream included) ends both: the client sees what the server did.
    client.once('close', end)
    upstream.once('close', end)
    client.pipe(upstream)
    upstream.pipe(client)
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve())
  })
  const address = server.address()
  if (address === null || typeof address !== 'object') throw new Error('the TCP proxy has no port')
  return {
    port: address.port,
    get targetPort() {
      return target
    },
    get isCut() {
      return isCut
    },
    stats,
    cut() {
      isCut = true
      dropAll()
    },
    heal() {
      isCut = false
    },
    retarget(port) {
      target = port
      dropAll()
    },
    close: () =>
      new Promise<void>((resolve) => {
        isCut = true
        dropAll()
        server.close(() => resolve())
      }),
  }
}
