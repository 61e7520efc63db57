/*
 * The local demo cluster as the README runs it (`timeledger demo-cluster`,
 * src/cluster/localDemo.ts), with two nodes: it says when its nodes and
 * HAProxy answer; a node killed with kill -9 is said to have ended, and a
 * line on the demo's standard input (Enter) starts it again on the same
 * port, where it answers again, while HAProxy kept answering; Ctrl-C
 * (SIGINT) stops everything. Its directory is one git ignores.
 */
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import t from 'tap'
import { freePort } from '../helpers/freePort.js'
import { TestClient } from '../helpers/http.js'
import { REPO_ROOT, tempDataDir } from '../helpers/server.js'
import { installed } from '../helpers/systemPrograms.js'

const NODES = 2
const WAIT_MS = 90_000

/** Whether nothing listens on the loopback port now. */
function free(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.createServer()
    probe.once('error', () => resolve(false))
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)))
  })
}

/** A base port whose demo ports (HAProxy, and each node's public, admin and internal port) are all free. */
async function freeBase(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const base = 20_000 + Math.floor(Math.random() * 30_000)
    const ports = [base, ...Array.from({ length: NODES }, (_, index) => [base + 1 + index, base + 11 + index, base + 21 + index]).flat()]
    if ((await Promise.all(ports.map(free))).every(Boolean)) return base
  }
  throw new Error('no free block of ports for the demo')
}

if (installed(t, ['postgresql', 'haproxy'])) {
  t.test('a killed demo node comes back on Enter', async (t) => {
    const parent = tempDataDir('demo')
    // PostgreSQL runs as the postgres user (when the test is root), which must pass through the folders above.
    fs.chmodSync(parent, 0o711)
    const dir = path.join(parent, 'cluster-demo')
    const port = await freeBase()
    const demo = spawn(
      process.execPath,
      [path.join(REPO_ROOT, 'dist', 'src', 'cli.js'), 'demo-cluster', '--dir', dir, '--port', String(port), '--nodes', String(NODES), '--postgres-port', String(await freePort())],
      {
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    )
    let output = ''
    demo.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
    demo.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
    const ended = new Promise<number | null>((resolve) => demo.once('exit', (code) => resolve(code)))
    t.teardown(async () => {
      if (demo.exitCode === null && demo.signalCode === null) {
        demo.kill('SIGINT')
        await ended
      }
    })
    const until = async (pattern: RegExp, what: string): Promise<RegExpExecArray> => {
      const deadline = Date.now() + WAIT_MS
      for (;;) {
        const match = pattern.exec(output)
        if (match !== null) return match
        if (demo.exitCode !== null || Date.now() > deadline) throw new Error(`the demo did not say ${what}:\n${output}`)
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
    }

    await until(/\nready: node1, node2, haproxy answer\n/, 'that everything answers')
    t.match(output, /PostgreSQL: first start, making its database cluster in /, 'the slow first step is announced')
    const pid = Number((await until(/\n {2}node1 +pid (\d+), port (\d+)\n/, "node1's pid"))[1])
    const apiKey = fs.readFileSync(path.join(dir, 'api-key'), 'utf8').trim()
    const throughHaproxy = new TestClient(port, apiKey)
    const node1 = new TestClient(port + 1, apiKey)
    t.equal((await node1.request('GET', '/readyz')).status, 200, 'node1 answers')

    process.kill(pid, 'SIGKILL')
    await until(new RegExp(`\\nnode1 \\(pid ${pid}\\) ended: SIGKILL; press Enter here to start it again\\n`), 'that node1 ended')
    t.not(
      await node1
        .request('GET', '/readyz')
        .then((answer) => answer.status)
        .catch(() => 'refused'),
      200,
      'node1 is gone',
    )
    t.equal((await throughHaproxy.request('GET', '/readyz')).status, 200, 'HAProxy still answers, through node2')

    demo.stdin.write('\n')
    const again = Number((await until(new RegExp(`\\nnode1 started again: pid (\\d+), port ${port + 1}\\n`), 'that node1 started again'))[1])
    t.not(again, pid, 'a new process')
    await until(/\nready: node1 answers\n/, 'that node1 answers again')
    t.equal((await node1.request('GET', '/readyz')).status, 200, 'node1 answers again on its port')
    demo.stdin.write('\n')
    await until(/\nevery node and HAProxy runs; nothing to start\n/, 'that nothing had ended')

    demo.kill('SIGINT')
    t.equal(await ended, 0, 'Ctrl-C stops the demo')
    t.match(output, /stopping the nodes, HAProxy and PostgreSQL/)
  })

  t.test('git ignores the demo directory', async (t) => {
    const ignored = fs.readFileSync(path.join(REPO_ROOT, '.gitignore'), 'utf8').split('\n')
    t.ok(ignored.includes('cluster-demo/'), '.gitignore names cluster-demo/')
  })
}
