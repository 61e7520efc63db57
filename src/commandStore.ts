/*
 * Where an operator command finds a tenant's data: the data directory's
 * LMDB store, or in cluster mode (DATABASE_URL) the cluster's store in
 * PostgreSQL, opened for the command's run and closed after it. A command
 * is handed the store and the two things that differ between the modes
 * (TenantTools): making a tenant readable at once, and writing as its only
 * writer (in a cluster: holding its lease, clusterTools.ts). Commands that
 * write a data directory offline refuse in cluster mode (refuseInCluster).
 */
import type { Config } from './config.js'
import { asTenantWriter, withClusterStore } from './cluster/clusterTools.js'
import { EmbeddedStorage } from './persist/embeddedStorage.js'
import type { Storage } from './persist/ports.js'

/** What a command does around its work on a tenant: nothing on a data directory; in cluster mode clusterTools.ts. */
export interface TenantTools {
  /** Makes the tenant readable at once (its whole retained log). */
  prepare(tenant: string): Promise<void>
  /** Runs `write` as the tenant's only writer; `create` when the tenant must not exist yet. */
  asWriter<T>(tenant: string, create: boolean, write: () => Promise<T>): Promise<T>
}

/** Runs `job` on the store of this configuration: the data directory's LMDB store, or the cluster's (DATABASE_URL). */
export async function withStore<T>(config: Config, job: (store: Storage, tools: TenantTools) => Promise<T>): Promise<T> {
  const cluster = config.cluster
  if (cluster !== null) {
    return withClusterStore(cluster, (store) =>
      job(store, {
        prepare: (tenant) => store.prepare(tenant, { wholeLog: true }),
        asWriter: (tenant, create, write) => asTenantWriter(store, cluster, tenant, create, write),
      }),
    )
  }
  const store = EmbeddedStorage.open(config.dataDir, config.lmdbMapSizeBytes)
  try {
    return await job(store, { prepare: async () => undefined, asWriter: (_tenant, _create, write) => write() })
  } finally {
    await store.close()
  }
}

/** Commands that write a data directory offline; in cluster mode the nodes own the store, so they refuse. */
export function refuseInCluster(config: Config, command: string): void {
  if (config.cluster !== null) throw new Error(`'${command}' works on a data directory; in cluster mode (DATABASE_URL) the node holding a tenant does it (see the README, "Cluster mode")`)
}
