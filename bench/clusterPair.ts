/*
 * Two cluster nodes behind HAProxy for the cluster benchmark: the nodes as
 * child processes (clusterNodes.ts) on one database, HAProxy running the
 * configuration `timeledger haproxy-config` prints (test/helpers/cluster.ts:
 * startHaproxy), with HAProxy's default check interval. A node is replaced
 * by a new incarnation on a new port with HAProxy restarted in front of the
 * new ports; settleWhereHaproxySends puts each tenant on the node HAProxy
 * sends it to.
 */
import { startHaproxy, type Haproxy } from '../test/helpers/cluster.js'
import { clusterLog, sleep } from './clusterLoad.js'
import { startClusterNode, type ClusterNodeProcess } from './clusterNodes.js'
import { BenchClient, withQuery } from './httpClient.js'
import type { SmallTenant } from './mixedLoad.js'

/** HAProxy's check interval: the `haproxy-config` default. */
const HAPROXY_CHECK_MS = 500
/** After a node restarts: HAProxy's checks must pass twice (rise 2) before it is sent requests again. */
const RESTART_SETTLE_MS = 6 * HAPROXY_CHECK_MS

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
    haproxy: await startHaproxy(nodes.map((node) => node.server.port), HAPROXY_CHECK_MS),
    async replaceNode(index) {
      const old = nodes[index] as ClusterNodeProcess
      await old.stop()
      nodes[index] = await startClusterNode(databaseUrl, old.nodeId)
      await two.haproxy.stop()
      two.haproxy = await startHaproxy(nodes.map((node) => node.server.port), HAPROXY_CHECK_MS)
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

/**
 * Tenants signed up through HAProxy all live on the node the sign-up call
 * (Host: localhost) hashed to, and stay there while they are used: a node
 * that HAProxy sends one of them to forwards it for good. To measure the
 * placement the design intends (each tenant on the node HAProxy sends it
 * to), every node is restarted cleanly (SIGTERM gives its leases back) and
 * one request per tenant through HAProxy lets the node it lands on claim it.
 */
export async function settleWhereHaproxySends(two: TwoNodes, tenants: readonly SmallTenant[]): Promise<void> {
  for (let index = 0; index < two.nodes.length; index += 1) await two.replaceNode(index)
  // Both nodes must be up in HAProxy's eyes (rise 2) before the tenants are touched.
  await sleep(RESTART_SETTLE_MS)
  const client = new BenchClient(two.haproxy.port)
  try {
    for (const { tenant, token } of tenants) await client.expect(200, 'GET', withQuery('/v1/users/@self', { token }), { tenant })
  } finally {
    client.close()
  }
}
