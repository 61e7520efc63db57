#!/usr/bin/env node
/*
 * The operator CLI: `timeledger <command> [options]` (or `npm run cli --`).
 *
 *   serve                          run the service (configuration from the environment)
 *   tenants                        list tenants: objects, log length, last snapshot
 *   snapshot <tenant> | --all      write a snapshot now (server stopped)
 *   restore <tenant> --from <file> [--as <tenant>] | --to-seq <n> | --to-time <ISO>
 *                                  replace a tenant's state by a snapshot file or an earlier point
 *                                  of its history (through the running server when one holds the data)
 *   history <tenant>               snapshots, log ranges and the points a restore can reach
 *   export <tenant> --out <file>   one self-contained file: the tenant's state and uploaded files
 *   import --from <file> [--as <name>]  create a tenant from an export file (server stopped)
 *
 * Commands that change the data directory refuse while a server holds it,
 * except restore, which then asks the server through its admin listener.
 * Long work shows its progress on stderr (src/progress.ts); an online
 * restore shows the progress lines the server streams back.
 */
import path from 'node:path'
import { callAdminWithProgress } from './admin/adminClient.js'
import { loadConfig, type Config } from './config.js'
import { lockHolder, refuseWhileServing } from './persist/dataDirLock.js'
import { TenantActor } from './tenants/tenantActor.js'
import { entriesToReplay, readHistory } from './persist/history.js'
import { installState, objectCount } from './tenants/installState.js'
import { LogStore } from './persist/logStore.js'
import { parseRestoreSource, rebuildState, type RestoreSource } from './tenants/restoreSource.js'
import { exportTenant, importTenant } from './tenants/tenantTransfer.js'
import { historyText, restoreOutcomeText, type RestoreOutcome } from './operatorReports.js'
import { progress } from './progress.js'
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
          const newest = store.snapshots.list(tenant)[0]
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
          const replay = progress(`replay ${tenant}`, 'entries', entriesToReplay(tenant, store))
          const actor = TenantActor.recover(tenant, config, store, (done) => replay.update(done))
          replay.finish()
          const encode = progress(`snapshot ${tenant}`, 'records', objectCount(actor.state))
          const result = await actor.snapshot((done) => encode.update(done))
          encode.finish()
          console.log(`${tenant}: snapshot at seq ${result.seq}, ${result.bytes} bytes, ${result.durationMs.toFixed(0)} ms → ${result.file}`)
        }
      })
    },
  },
  restore: {
    summary: "replace a tenant's state by a snapshot file or an earlier point of its history (online when a server runs)",
    usage:
      'restore <tenant> --from <snapshot file> [--as <tenant>] | --to-seq <n> | --to-time <ISO time>\n\n' +
      '--to-seq and --to-time rebuild the tenant as it was after that log entry (for a time: the last entry at or before it);\n' +
      "--from takes a snapshot file (.tlsnap) of this tenant; one taken of another tenant is refused unless --as names this\n" +
      "tenant again (its account then takes this tenant's name). Export files go to 'import'.\n" +
      "'history <tenant>' lists the reachable points. The result becomes the current state as a new snapshot; the history\n" +
      'before it stays. With a server holding the data directory, the restore runs in that server through its admin\n' +
      'listener (ADMIN_PORT, and ADMIN_KEY or DATA_DIR/admin-key); otherwise here.',
    async run(args, config) {
      const tenant = args[0]
      if (tenant === undefined || tenant.startsWith('--')) throw new UsageError('restore needs <tenant>')
      const source = parseRestoreSource({
        from: flagValue(args, '--from'),
        toSeq: flagValue(args, '--to-seq'),
        toTime: flagValue(args, '--to-time'),
        as: flagValue(args, '--as'),
      })
      const holder = lockHolder(config.dataDir)
      if (holder !== null) {
        if (config.adminPort === 0) throw new Error(`a server (pid ${holder}) holds ${config.dataDir}; restoring through it needs its admin port, but ADMIN_PORT is 0 here`)
        console.log(`a server (pid ${holder}) holds ${config.dataDir}: restoring online through its admin listener`)
        // The server streams its progress lines (load, replay, snapshot, swap); they go to stderr like local progress.
        const answer = await callAdminWithProgress(config, 'POST', `/tenants/${encodeURIComponent(tenant)}/restore`, adminRestoreBody(source), (line) =>
          process.stderr.write(`${line}\n`),
        )
        console.log(restoreOutcomeText(tenant, answer as unknown as RestoreOutcome))
        return
      }
      await withStore(config, async (store) => {
        const { state, description, pointSeq } = await rebuildState(tenant, store, source, progress)
        const encode = progress(`snapshot ${tenant}`, 'records', objectCount(state))
        const installed = await installState(state, store, { onProgress: (done) => encode.update(done) })
        encode.finish()
        console.log(restoreOutcomeText(tenant, { ...installed, restored: description, pointSeq }))
      })
    },
  },
  history: {
    summary: 'list the snapshots, the log ranges and the points a restore can reach',
    usage: 'history <tenant>\n\nReads only; works while a server runs.',
    async run(args, config) {
      const tenant = args[0]
      if (tenant === undefined || tenant.startsWith('--')) throw new UsageError('history needs <tenant>')
      await withStore(config, async (store) => {
        if (store.tenants.get(tenant) === undefined && store.snapshots.list(tenant).length === 0) throw new Error(`no tenant '${tenant}'`)
        console.log(historyText(readHistory(tenant, store)))
      })
    },
  },
  export: {
    summary: "write a tenant's state and uploaded files to one file (for import elsewhere)",
    usage: 'export <tenant> --out <file>\n\nReads only; works while a server runs (it exports every acknowledged write).',
    async run(args, config) {
      const tenant = args[0]
      const out = flagValue(args, '--out')
      if (tenant === undefined || tenant.startsWith('--') || out === undefined) throw new UsageError('export needs <tenant> and --out <file>')
      await withStore(config, async (store) => {
        const result = await exportTenant(tenant, config.dataDir, store, path.resolve(out), progress)
        const missing = result.missingFiles.length === 0 ? '' : ` (bytes missing for ${result.missingFiles.join(', ')})`
        console.log(`${tenant}: exported seq ${result.seq}, ${result.objects} objects and ${result.files} files${missing}, ${result.bytes} bytes → ${out}`)
      })
    },
  },
  import: {
    summary: 'create a tenant from an export file (server stopped)',
    usage:
      'import --from <export file> [--as <new tenant name>]\n\nRefuses when the tenant exists. With --as the records keep their ids; the account takes the new name.\n' +
      "Snapshot files (.tlsnap) go to 'restore <tenant> --from <file>'.",
    async run(args, config) {
      const from = flagValue(args, '--from')
      if (from === undefined) throw new UsageError('import needs --from <file>')
      refuseWhileServing(config.dataDir, 'import')
      await withStore(config, async (store) => {
        const result = await importTenant(from, config.dataDir, store, flagValue(args, '--as'), progress)
        const renamed = result.tenant === result.from ? '' : ` (exported as '${result.from}')`
        console.log(`${result.tenant}${renamed}: imported ${result.objects} objects and ${result.files} files as snapshot seq ${result.seq} → ${result.file}`)
      })
    },
  },
}

/** The admin listener's restore body for a source given on the command line (a file path made absolute). */
function adminRestoreBody(source: RestoreSource): Record<string, unknown> {
  if ('file' in source) return source.as === undefined ? { from: path.resolve(source.file) } : { from: path.resolve(source.file), as: source.as }
  if ('toSeq' in source) return { toSeq: source.toSeq }
  return { toTime: new Date(source.toTimeMs).toISOString() }
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
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined
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
