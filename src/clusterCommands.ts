/*
 * The operator CLI's cluster commands (cli.ts lists them with the others):
 * `cluster` reads the cluster store (nodes, leases, where each tenant
 * lives), `demo-cluster` runs PostgreSQL, the nodes and HAProxy on this
 * machine, `haproxy-config` prints the HAProxy configuration of a
 * cluster's nodes. Each reads its options as commandLine.ts declares.
 */
import { UsageError, type Command } from './commandLine.js'
import { haproxyConfig } from './cluster/haproxyConfig.js'
import { runDemo } from './cluster/localDemo.js'
import { clusterReport, withClusterStore } from './cluster/clusterTools.js'
import { tenantNames } from './tenants/tenantDirectory.js'

export const CLUSTER_COMMANDS: Record<string, Command> = {
  cluster: {
    summary: 'cluster mode: the nodes, their leases and where each tenant lives',
    usage: 'cluster\n\nReads the cluster store named by DATABASE_URL (with CLUSTER_SECRET, as the nodes run).',
    options: {},
    positionals: 0,
    async run(_line, config) {
      const cluster = config.cluster
      if (cluster === null) throw new Error("'cluster' needs DATABASE_URL: it reads the cluster store")
      await withClusterStore(cluster, async (store) => {
        const [nodes, leases, now] = [await store.nodes(), await store.leases(), Date.now()]
        console.log(clusterReport(nodes, leases, tenantNames(store), now, cluster.leaseMs))
      })
    },
  },
  'demo-cluster': {
    summary: 'run a local demo cluster: PostgreSQL, three nodes and HAProxy on this machine',
    usage:
      'demo-cluster [--dir <dir>] [--port <n>] [--nodes <n>] [--postgres-port <n>]\n\n' +
      'Everything is kept under --dir (default ./cluster-demo). HAProxy listens on --port (default 8000); node n on\n' +
      'port+n, its admin listener on port+10+n, its internal listener on port+20+n; PostgreSQL on --postgres-port\n' +
      "(default 5433). Needs Debian's postgresql and haproxy packages. Ctrl-C stops everything.",
    options: { dir: 'value', port: 'value', nodes: 'value', 'postgres-port': 'value' },
    positionals: 0,
    async run(line) {
      const number = (name: string, fallback: number, min: number, max: number) => {
        const text = line.text(name) ?? String(fallback)
        const value = Number(text)
        if (!Number.isInteger(value) || value < min || value > max) throw new UsageError(`--${name} must be a whole number from ${min} to ${max}, got '${text}'`)
        return value
      }
      await runDemo({
        dir: line.text('dir') ?? 'cluster-demo',
        port: number('port', 8000, 1, 65_500),
        nodes: number('nodes', 3, 1, 9),
        postgresPort: number('postgres-port', 5433, 1, 65_535),
      })
    },
  },
  'haproxy-config': {
    summary: 'print the HAProxy configuration for the nodes of a cluster',
    usage:
      'haproxy-config --nodes <host:port,host:port,…> [--bind <address:port>] [--public-host <host>] [--check-every-ms <n>]\n' +
      '               [--max-connections <n>] [--stats <address:port>]\n\n' +
      "--nodes lists the nodes' public listeners (PORT of each). HAProxy listens on --bind (default 127.0.0.1:8000), sends each\n" +
      'Host to one node by consistent hashing and checks GET /readyz on each node every --check-every-ms (default 500) with\n' +
      'Host: --public-host (default BASE_DOMAIN). --max-connections (default 4096) needs about twice as many file descriptors.\n' +
      '--stats adds a statistics page.',
    options: { nodes: 'value', bind: 'value', 'public-host': 'value', 'check-every-ms': 'value', 'max-connections': 'value', stats: 'value' },
    positionals: 0,
    async run(line, config) {
      const nodes = line.text('nodes')
      if (nodes === undefined) throw new UsageError('haproxy-config needs --nodes')
      const checkEvery = line.text('check-every-ms') ?? '500'
      if (!/^\d{2,6}$/.test(checkEvery)) throw new UsageError(`--check-every-ms must be a number of milliseconds, got '${checkEvery}'`)
      const maxConnections = line.text('max-connections') ?? '4096'
      if (!/^\d{1,6}$/.test(maxConnections) || Number(maxConnections) < 1) throw new UsageError(`--max-connections must be a positive number, got '${maxConnections}'`)
      process.stdout.write(
        haproxyConfig({
          nodes: nodes
            .split(',')
            .map((node) => node.trim())
            .filter((node) => node !== ''),
          bind: line.text('bind') ?? '127.0.0.1:8000',
          publicHost: line.text('public-host') ?? config.baseDomain,
          checkEveryMs: Number(checkEvery),
          stats: line.text('stats') ?? null,
          maxConnections: Number(maxConnections),
        }),
      )
    },
  },
}
