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
 *   status                         is the server up: pid, ports, uptime, tenants in memory, memory, log size
 *   metrics                        the running server's metrics (Prometheus text)
 *   history <tenant>               snapshots, log ranges and the points a restore can reach; with --entries
 *                                  each log entry (time, user, what it changed), between --from and --to
 *   export <tenant> --out <file>   one self-contained file: the tenant's state and uploaded files
 *   import --from <file> [--as <name>]  create a tenant from an export file (server stopped)
 *   cluster                        cluster mode: the nodes, their leases, where each tenant lives
 *   haproxy-config --nodes <host:port,…>  print the HAProxy configuration of a cluster
 *   demo-cluster                   run PostgreSQL, three nodes and HAProxy on this machine
 *
 * Options are read by util.parseArgs in strict mode (commandLine.ts):
 * `--out file` and `--out=file` alike; an unknown option, a missing value
 * or an extra argument is refused with the command's usage and exit code 2
 * (a failure of the command itself exits with 1).
 *
 * Commands that change the data directory refuse while a server holds it,
 * except restore, which then asks the server through its admin listener:
 * the one the server's lock names (admin/adminClient.ts), as status and
 * metrics do.
 * Long work shows its progress on stderr (src/progress.ts); an online
 * restore shows the progress lines the server streams back.
 *
 * The store a command works on (a data directory, or the cluster's) is
 * commandStore.ts; `restore` is restoreCommand.ts; the cluster's commands
 * are clusterCommands.ts.
 */
import path from 'node:path'
import { adminTarget, fetchAdmin, ServerStarting, type AdminTarget } from './admin/adminClient.js'
import type { ServerStatus } from './admin/statusRoute.js'
import { parseCommandLine, UsageError, type Command } from './commandLine.js'
import { CLUSTER_COMMANDS } from './clusterCommands.js'
import { loadConfig, type Config } from './config.js'
import { refuseWhileServing, runningServer } from './persist/dataDirLock.js'
import { TenantActor } from './tenants/tenantActor.js'
import { entriesToReplay, readHistory } from './persist/history.js'
import { entryLines, parseEntryBound, type EntryBound } from './logReport.js'
import { objectCount } from './tenants/installState.js'
import { recoverShowingProgress } from './tenants/restoreSource.js'
import { exportTenant, importTenant } from './tenants/tenantTransfer.js'
import { directoryRow, tenantNames } from './tenants/tenantDirectory.js'
import { historyText, statusText } from './operatorReports.js'
import { progress, progressAfter, type ProgressFactory } from './progress.js'
import { startService } from './service.js'
import { refuseInCluster, withStore } from './commandStore.js'
import { RESTORE_COMMAND } from './restoreCommand.js'

/** A step of operator work that ends within this shows no progress; one that takes longer shows it as it goes. */
const PROGRESS_GRACE_MS = 1000

/** The exit code of `status` when the server is not up, not ready, or cannot be asked. */
const NOT_READY_EXIT_CODE = 1

/**
 * The admin listener of the server that holds the data directory (its lock names it), or of the cluster node on
 * ADMIN_PORT; null when no server holds the data directory.
 */
function runningAdmin(config: Config): AdminTarget | null {
  if (config.cluster !== null) return adminTarget(config, null)
  const server = runningServer(config.dataDir)
  return server === null ? null : adminTarget(config, server)
}

const RUNNING_SERVER_HELP =
  'It asks the server that holds DATA_DIR through its admin listener: the port is the one the server wrote into its\n' +
  'lock, DATA_DIR/server.lock (a cluster node, which holds no lock: ADMIN_PORT); the key is ADMIN_KEY or DATA_DIR/admin-key.'

const COMMANDS: Record<string, Command> = {
  serve: {
    summary: 'run the HTTP service',
    usage: 'serve\n\nEnvironment: PORT (8080), HOST (127.0.0.1), DATA_DIR (./data), BASE_DOMAIN (localhost), API_KEYS, and the rest listed in the README.',
    options: {},
    positionals: 0,
    async run(_line, config) {
      const service = await startService(config)
      console.log(`Admin listener (metrics, health) on http://127.0.0.1:${service.adminPort}`)
      console.log(
        `TimeLedger listening on http://${config.host}:${service.port} (tenants at http://<tenant>.${config.baseDomain}:${service.port}/v1 or http://${config.baseDomain}:${service.port}/tenant/<tenant>/v1), data in ${config.dataDir}`,
      )
      let stopping = false
      const stop = (signal: string) => {
        if (stopping) return
        stopping = true
        const started = performance.now()
        console.log(`${signal}: draining, snapshotting and stopping`)
        // The snapshots of a stop can take many seconds: their progress goes to stderr, as every operator step's.
        service.stop({ progress }).then(
          () => {
            console.log(`stopped in ${((performance.now() - started) / 1000).toFixed(1)} s`)
            process.exit(0)
          },
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
    options: {},
    positionals: 0,
    async run(_line, config) {
      await withStore(config, async (store, { prepare }) => {
        const rows = [['tenant', 'objects', 'log entries', 'last seq', 'last snapshot']]
        const names = tenantNames(store)
        // Counting a tenant's objects loads it: seconds for a million records. Each load that takes longer than
        // PROGRESS_GRACE_MS shows its progress, and one line in the end says what was read (stderr; the table is stdout).
        const reading = progress('read tenants', 'tenants', names.length)
        const slowOnly: ProgressFactory = (label, unit, total) => progressAfter(PROGRESS_GRACE_MS, label, unit, total)
        for (const [done, tenant] of names.entries()) {
          reading.update(done)
          await prepare(tenant)
          const { state } = await recoverShowingProgress(tenant, store, undefined, slowOnly)
          const newest = store.snapshots.list(tenant)[0]
          rows.push([tenant, String(objectCount(state)), String(store.logLength(tenant)), String(state.seq), newest === undefined ? '-' : `seq ${newest.seq} (${newest.file})`])
        }
        reading.update(names.length)
        reading.finish()
        printTable(rows)
      })
    },
  },
  snapshot: {
    summary: 'write a snapshot of one tenant or all (server stopped)',
    usage: 'snapshot <tenant> | --all',
    options: { all: 'flag' },
    positionals: 1,
    async run(line, config) {
      refuseInCluster(config, 'snapshot')
      refuseWhileServing(config.dataDir, 'snapshot')
      await withStore(config, async (store) => {
        const names = line.flag('all') ? tenantNames(store) : line.positionals.slice(0, 1)
        if (names.length === 0) throw new UsageError('name a tenant or --all')
        for (const tenant of names) {
          if (directoryRow(store, tenant) === undefined) throw new Error(`no tenant '${tenant}'`)
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
  restore: RESTORE_COMMAND,
  status: {
    summary: 'is the server up: pid, ports, uptime, tenants in memory, memory, log size (exits 0 only when up and ready)',
    usage: `status\n\n${RUNNING_SERVER_HELP}\nExits 0 when the server is up and ready, ${NOT_READY_EXIT_CODE} when it is not running, starting, stopping or cannot be asked.`,
    options: {},
    positionals: 0,
    async run(_line, config) {
      let target: AdminTarget | null
      try {
        target = runningAdmin(config)
      } catch (error) {
        if (!(error instanceof ServerStarting)) throw error
        console.log(`starting: the server (pid ${error.pid}) holds ${path.resolve(config.dataDir)}; its admin listener is not up yet`)
        return NOT_READY_EXIT_CODE
      }
      if (target === null) {
        console.log(`not running: no server holds ${path.resolve(config.dataDir)}`)
        return NOT_READY_EXIT_CODE
      }
      const status = JSON.parse(await fetchAdmin(target, '/status')) as ServerStatus
      console.log(statusText(status, target.address))
      return status.phase === 'ready' ? 0 : NOT_READY_EXIT_CODE
    },
  },
  metrics: {
    summary: "print the server's metrics (the Prometheus text of its admin listener's /metrics)",
    usage: `metrics\n\n${RUNNING_SERVER_HELP}\nThe metrics are listed in the README ("Observability").`,
    options: {},
    positionals: 0,
    async run(_line, config) {
      const target = runningAdmin(config)
      if (target === null) throw new Error(`no server holds ${path.resolve(config.dataDir)}: start one (npm start), or set DATA_DIR to the one it uses`)
      process.stdout.write(await fetchAdmin(target, '/metrics', 'text/plain'))
    },
  },
  history: {
    summary: 'list the snapshots, the log ranges and the points a restore can reach; with --entries each log entry',
    usage:
      'history <tenant> [--entries [--from <seq|ISO time>] [--to <seq|ISO time>]]\n\n' +
      'With --entries: each log entry the log holds (oldest first, between --from and --to, both included) with its time,\n' +
      "who made it ('user unknown' before the log recorded it) and what it changed, to choose a restore point.\n" +
      'Reads only; works while a server runs.',
    options: { entries: 'flag', from: 'value', to: 'value' },
    positionals: 1,
    async run(line, config) {
      const tenant = line.positionals[0]
      if (tenant === undefined) throw new UsageError('history needs <tenant>')
      const bound = (name: string): EntryBound | null => {
        const text = line.text(name)
        if (text === undefined) return null
        if (!line.flag('entries')) throw new UsageError(`--${name} goes with --entries`)
        const parsed = parseEntryBound(text)
        if (parsed === null) throw new UsageError(`--${name} needs a sequence number or an ISO 8601 time such as 2026-11-23T18:30:00Z, got '${text}'`)
        return parsed
      }
      const from = bound('from')
      const to = bound('to')
      await withStore(config, async (store, { prepare }) => {
        await prepare(tenant)
        if (directoryRow(store, tenant) === undefined && store.snapshots.list(tenant).length === 0) throw new Error(`no tenant '${tenant}'`)
        if (!line.flag('entries')) {
          console.log(historyText(readHistory(tenant, store)))
          return
        }
        for (const text of entryLines(store, tenant, from, to)) console.log(text)
      })
    },
  },
  export: {
    summary: "write a tenant's state and uploaded files to one file (for import elsewhere)",
    usage: 'export <tenant> --out <file>\n\nReads only; works while a server runs (it exports every acknowledged write).',
    options: { out: 'value' },
    positionals: 1,
    async run(line, config) {
      const tenant = line.positionals[0]
      const out = line.text('out')
      if (tenant === undefined || out === undefined) throw new UsageError('export needs <tenant> and --out <file>')
      await withStore(config, async (store, { prepare }) => {
        await prepare(tenant)
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
    options: { from: 'value', as: 'value' },
    positionals: 0,
    async run(line, config) {
      const from = line.text('from')
      if (from === undefined) throw new UsageError('import needs --from <file>')
      if (config.cluster === null) refuseWhileServing(config.dataDir, 'import')
      await withStore(config, async (store, tools) => {
        const asWriter = <R>(tenant: string, write: () => Promise<R>) => tools.asWriter(tenant, true, write)
        const result = await importTenant(from, config.dataDir, store, line.text('as'), progress, asWriter)
        const renamed = result.tenant === result.from ? '' : ` (exported as '${result.from}')`
        console.log(`${result.tenant}${renamed}: imported ${result.objects} objects and ${result.files} files as snapshot seq ${result.seq} → ${result.file}`)
      })
    },
  },
  ...CLUSTER_COMMANDS,
}

function printTable(rows: string[][]): void {
  const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length))) ?? []
  for (const row of rows) console.log(row.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join('  '))
}

function help(): string {
  const lines = Object.entries(COMMANDS).map(([name, command]) => `  ${name.padEnd(15)} ${command.summary}`)
  return `usage: timeledger <command> [options]\n\ncommands:\n${lines.join('\n')}\n\n'timeledger <command> --help' shows a command's options.`
}

/** Exit code of a command line the CLI does not take (unknown command or option, missing argument). */
const USAGE_EXIT_CODE = 2

async function main(argv: string[]): Promise<number> {
  const [name, ...args] = argv
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    console.log(help())
    return name === undefined ? USAGE_EXIT_CODE : 0
  }
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined
  if (command === undefined) {
    console.error(`unknown command '${name}'\n\n${help()}`)
    return USAGE_EXIT_CODE
  }
  const usage = `usage: timeledger ${command.usage}`
  try {
    // --help wins over anything else on the line, so a command's help is there even for a line it would refuse.
    if (args.includes('--help') || args.includes('-h')) {
      console.log(`${usage}\n\n${command.summary}`)
      return 0
    }
    const line = parseCommandLine(name, args, command.options, command.positionals)
    const code = await command.run(line, loadConfig())
    return name === 'serve' ? -1 : (code ?? 0)
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(`${error.message}\n${usage}`)
      return USAGE_EXIT_CODE
    }
    console.error(error instanceof Error ? error.message : String(error))
    return 1
  }
}

const code = await main(process.argv.slice(2))
if (code >= 0) process.exit(code)
