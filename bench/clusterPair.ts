/*
 * Two cluster nodes behind HAProxy for the cluster benchmark: the nodes as
 * child processes (clusterNodes.ts) on one database, HAProxy running the
 * configuration `timeledger haproxy-config` prints (test/helpers/cluster.ts:
 * startHaproxy), with HAProxy's default check interval. A node is replaced
 * by a new incarnation on a new port with HAProxy restarted in front of the
 * new ports. Tenants signed up through HAProxy live where HAProxy sends
 * their requests (the node a sign-up lands on gives the new tenant back).
 */
import { startHaproxy, type Haproxy } from '../test/helpers/cluster.js'
import { sleep } from './clusterLoad.js'
import { startClusterNode, type ClusterNodeProcess } from './clusterNodes.js'

/** HAProxy's check interval: the `haproxy-config` default. */
const HAPROXY_CHECK_MS = 500

export async function untilReady(port: number, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const answer = await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => null)
    if (answer?.status === 200) return
    if (Date.now() > deadline) throw new Error(`nothing ready on port ${port} within ${timeoutMs} ms`)
    await sleep(100)
  }
}

export interface TwoNodes {
  databaseUrl: string
  nodes: ClusterNodeProcess[]
  haproxy: Haproxy
  /**
   * Starts node `index` again (after a kill or a stop) on a new port and restarts HAProxy in front of the new
   * ports: a port freed a moment ago may already be some outgoing connection's on a busy machine. HAProxy's
   * consistent hash keys its servers by their ids (node1, node2), not addresses, so the placement stays.
   */
  replaceNode(index: number): Promise<void>
  stop(): Promise<void>
}

export async function startTwoNodes(databaseUrl: string): Promise<TwoNodes> {
  const nodes = [await startClusterNode(databaseUrl, 'node1'), await startClusterNode(databaseUrl, 'node2')]
  const two: TwoNodes = {
    databaseUrl,
    nodes,
    haproxy: await startHaproxy(
      nodes.map((node) => node.server.port),
      HAPROXY_CHECK_MS,
    ),
    async replaceNode(index) {
      const old = nodes[index] as ClusterNodeProcess
      await old.stop()
      nodes[index] = await startClusterNode(databaseUrl, old.nodeId)
      await two.haproxy.stop()
      two.haproxy = await startHaproxy(
        nodes.map((node) => node.server.port),
        HAPROXY_CHECK_MS,
      )
      await untilReady(two.haproxy.port)
    },
    stop: async () => {
      await two.haproxy.stop()
      for (const node of nodes) await node.stop()
    },
  }
  await untilReady(two.haproxy.port)
  return two
}
