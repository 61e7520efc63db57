#!/usr/bin/env node
/*
 * The operator CLI: `timeledger <command> [options]` (or `npm run cli --`).
 *
 *   serve                          run the service (configuration from the environment)
 *   tenants                        list tenants: objects, log length, last snapshot
 *   snapshot <tenant> | --all      write a snapshot now (server stopped)
 *   restore <tenant> --from <file> replace a tenant's state by a snapshot file (server stopped)
 *
 * Commands that change the data directory refuse while a server holds it.
 */
import { loadConfig, type Config } from './config.js'
import { refuseWhileServing } from './dataDirLock.js'
import { TenantActor } from './engine/tenantActor.js'
import { TenantState } from './engine/tenantState.js'
import { LogStore } from './persist/logStore.js'
import { loadSnapshotBody } from './persist/recovery.js'
import { encodeSnapshot, listSnapshots, readSnapshotFile, tenantSnapshotDir, writeSnapshotFile } from './persist/snapshotFile.js'
import { startService } from './service.js'

interface Command {
  summary: string
  usage: string
  run(args: string[], config: Config): Promise<void>
}

function flagValue(args: string[], name: string): string | undefined {
  const index = args.indexOf(name)
  return index < 0 ? undefined : args[index + 1]
}

async function withStore<T>(config: Config, job: (store: LogStore) => Promise<T>): Promise<T> {
  const store = LogStore.open(config.dataDir, config.lmdbMapSizeBytes)
  try {
    return await job(store)
  } finally {
    await store.close()
  }
}

const COMMANDS: Record<string, Command> = {
  serve: {
    summary: 'run the HTTP service',
    usage: 'serve\n\nEnvironment: PORT (8080), HOST (127.0.0.1), DATA_DIR (./data), BASE_DOMAIN (localhost), API_KEYS, and the rest listed in the README.',
    async run(_args, config) {
      const service = await startService(config)
      console.log(`Admin listener (metrics, health) on http://127.0.0.1:${service.adminPort}`)
      console.log(`TimeLedger listening on http://${config.host}:${service.port} (tenants at http://<tenant>.${config.baseDomain}:${service.port}/v1), data in ${config.dataDir}`)
      let stopping = false
      const stop = (signal: string) => {
        if (stopping) return
        stopping = true
        console.log(`${signal}: draining, snapshotting and stopping`)
        service.stop().then(
          () => process.exit(0),
          (error: unknown) => {
            console.error('clean stop failed:', error)
            process.exit(1)
          },
        )
      }
      process.on('SIGTERM', () => stop('SIGTERM'))
      process.on('SIGINT', () => stop('SIGINT'))
    },
  },
  tenants: {
    summary: 'list tenants with object counts, log length and last snapshot',
    usage: 'tenants',
    async run(_args, config) {
      await withStore(config, async (store) => {
        const rows = [['tenant', 'objects', 'log entries', 'last seq', 'last snapshot']]
        for (const tenant of store.tenants.getKeys()) {
          const actor = TenantActor.recover(tenant, config, store)
          let objects = 0
          for (const collection of actor.state.collections.values()) objects += collection.size
          const newest = listSnapshots(config.dataDir, tenant)[0]
          rows.push([tenant, String(objects), String(store.logLength(tenant)), String(actor.state.seq), newest === undefined ? '-' : `seq ${newest.seq} (${newest.file})`])
        }
        printTable(rows)
      })
    },
  },
  snapshot: {
    summary: 'write a snapshot of one tenant or all (server stopped)',
    usage: 'snapshot <tenant> | --all',
    async run(args, config) {
      refuseWhileServing(config.dataDir, 'snapshot')
      await withStore(config, async (store) => {
        const names = args.includes('--all') ? [...store.tenants.getKeys()] : args.slice(0, 1)
        if (names.length === 0) throw new UsageError('name a tenant or --all')
        for (const tenant of names) {
          if (store.tenants.get(tenant) === undefined) throw new Error(`no tenant '${tenant}'`)
          const result = await TenantActor.recover(tenant, config, store).snapshot()
          console.log(`${tenant}: snapshot at seq ${result.seq}, ${result.bytes} bytes, ${result.durationMs.toFixed(0)} ms → ${result.file}`)
        }
      })
    },
  },
  restore: {
    summary: "replace a tenant's state by a snapshot file (server stopped)",
    usage: 'restore <tenant> --from <snapshot file>',
    async run(args, config) {
      const tenant = args[0]
      const from = flagValue(args, '--from')
      if (tenant === undefined || tenant.startsWith('--') || from === undefined) throw new UsageError('restore needs <tenant> and --from <file>')
      refuseWhileServing(config.dataDir, 'restore')
      const { header, body } = readSnapshotFile(from)
      const state = new TenantState(tenant)
      loadSnapshotBody(state, body)
      await withStore(config, async (store) => {
        // The restored state continues the tenant's log: it gets the next sequence number, and
        // entries after it are removed, so a restart loads exactly the restored state.
        const seq = Math.max(store.lastSeq(tenant), ...listSnapshots(config.dataDir, tenant).map((listing) => listing.seq)) + 1
        const bytes = encodeSnapshot(tenant, seq, Date.now(), body)
        const file = await writeSnapshotFile(tenantSnapshotDir(config.dataDir, tenant), seq, bytes)
        await store.truncateAfter(tenant, seq)
        if (store.tenants.get(tenant) === undefined) await store.tenants.put(tenant, { createdAt: Date.now() })
        let objects = 0
        for (const collection of state.collections.values()) objects += collection.size
        console.log(`${tenant}: restored ${objects} objects from ${from} (taken at seq ${header.seq} of '${header.tenant}') as snapshot seq ${seq} → ${file}`)
      })
    },
  },
}

class UsageError extends Error {}

function printTable(rows: string[][]): void {
  const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length))) ?? []
  for (const row of rows) console.log(row.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join('  '))
}

function help(): string {
  const lines = Object.entries(COMMANDS).map(([name, command]) => `  ${name.padEnd(10)} ${command.summary}`)
  return `usage: timeledger <command> [options]\n\ncommands:\n${lines.join('\n')}\n\n'timeledger <command> --help' shows a command's options.`
}

async function main(argv: string[]): Promise<number> {
  const [name, ...args] = argv
  if (name === undefined || name === '--help' || name === 'help') {
    console.log(help())
    return name === undefined ? 1 : 0
  }
  const command = COMMANDS[name]
  if (command === undefined) {
    console.error(`unknown command '${name}'\n\n${help()}`)
    return 1
  }
  if (args.includes('--help')) {
    console.log(`usage: timeledger ${command.usage}\n\n${command.summary}`)
    return 0
  }
  try {
    await command.run(args, loadConfig())
    return name === 'serve' ? -1 : 0
  } catch (error) {
    console.error(error instanceof UsageError ? `${error.message}\nusage: timeledger ${command.usage}` : error instanceof Error ? error.message : String(error))
    return 1
  }
}

const code = await main(process.argv.slice(2))
if (code >= 0) process.exit(code)
