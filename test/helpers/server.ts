/*
 * Starting real servers for tests: in this process (fast, for HTTP tests)
 * or as a child process running the compiled CLI (for crash tests that
 * kill it). Each gets its own temporary data directory and a free port.
 * The HTTP suites run against a cluster with TIMELEDGER_TEST_CLUSTER=1
 * (cluster.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { loadConfig } from '../../src/config.js'
import { startService, type RunningService } from '../../src/service.js'
import type { TenantActor } from '../../src/tenants/tenantActor.js'
import { TestClient } from './http.js'
import { stopOnSignal } from './stopOnSignal.js'

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')
export const TEST_API_KEY = 'test-api-key'

export function tempDataDir(label: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `timeledger-${label}-`))
}

export function testEnv(dataDir: string, extra: Record<string, string> = {}): Record<string, string> {
  return { PORT: '0', ADMIN_PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, API_KEYS: TEST_API_KEY, PASSWORD_HASH_MEMORY_KIB: '1024', PASSWORD_HASH_PASSES: '1', QUIET: '1', ...extra }
}

export interface InProcessServer {
  service: RunningService
  /** Every node of a cluster (TIMELEDGER_TEST_CLUSTER=1); the one service otherwise. */
  services: readonly RunningService[]
  client: TestClient
  dataDir: string
  stop(): Promise<void>
}

/**
 * A server in this process on `dataDir`. With TIMELEDGER_TEST_CLUSTER=1 it is a cluster instead (cluster.ts): two
 * nodes on a database of their own behind HAProxy, the client going through HAProxy and `service` being the first node.
 */
export async function startInProcess(dataDir = tempDataDir('http'), extra: Record<string, string> = {}): Promise<InProcessServer> {
  if (process.env.TIMELEDGER_TEST_CLUSTER === '1') {
    const { startInProcessCluster } = await import('./cluster.js')
    const cluster = await startInProcessCluster(dataDir, extra)
    return { service: cluster.services[0] as RunningService, services: cluster.services, client: cluster.client, dataDir, stop: () => cluster.stop() }
  }
  const service = await startService(loadConfig(testEnv(dataDir, extra)))
  return { service, services: [service], client: new TestClient(service.port, TEST_API_KEY), dataDir, stop: () => service.stop() }
}

/** The tenant's actor where it is active: the node serving it in a cluster (undefined when none does yet). */
export function activeActor(server: InProcessServer, tenant: string): TenantActor | undefined {
  for (const { services } of server.services) for (const actor of services.registry.active()) if (actor.tenant === tenant) return actor
  return undefined
}

/** Whether `server` is a test cluster (TIMELEDGER_TEST_CLUSTER=1), for the few checks of the embedded layout on disk. */
export function isTestCluster(server: InProcessServer): boolean {
  return server.services.length > 1
}

export interface ChildServer {
  child: ChildProcess
  port: number
  /** Port of the admin listener (on 127.0.0.1). */
  adminPort: number
  client: TestClient
  output: () => string
}

/** Runs `node dist/src/cli.js serve` and resolves once it listens. */
export function spawnServer(dataDir: string, extra: Record<string, string> = {}): Promise<ChildServer> {
  const cli = path.join(REPO_ROOT, 'dist', 'src', 'cli.js')
  const child = spawn(process.execPath, [cli, 'serve'], { env: { ...process.env, ...testEnv(dataDir, extra) }, stdio: ['ignore', 'pipe', 'pipe'] })
  // A server must not outlive a test process ended by a signal (stopOnSignal.ts).
  const forgetOnSignal = stopOnSignal(() => child.kill('SIGKILL'))
  child.once('exit', forgetOnSignal)
  let output = ''
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${output}`)), 30_000)
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      const match = /listening on http:\/\/[\d.]+:(\d+)/.exec(output)
      if (match !== null) {
        clearTimeout(timer)
        child.stdout?.off('data', onData)
        child.stdout?.on('data', (more: Buffer) => (output += more.toString()))
        const port = Number(match[1])
        const adminPort = Number(/Admin listener \(metrics, health\) on http:\/\/[\d.]+:(\d+)/.exec(output)?.[1] ?? 0)
        resolve({ child, port, adminPort, client: new TestClient(port, TEST_API_KEY), output: () => output })
      }
    }
    child.stdout?.on('data', onData)
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()))
    child.on('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`server exited with ${code}:\n${output}`))
    })
  })
}

export function killHard(server: ChildServer): Promise<void> {
  return new Promise((resolve) => {
    if (server.child.exitCode !== null || server.child.signalCode !== null) {
      resolve()
      return
    }
    server.child.once('exit', () => resolve())
    server.child.kill('SIGKILL')
  })
}

export function stopGracefully(server: ChildServer): Promise<number | null> {
  return new Promise((resolve) => {
    server.child.removeAllListeners('exit')
    server.child.once('exit', (code) => resolve(code))
    server.child.kill('SIGTERM')
  })
}
