/*
 * The data directory lock after kill -9: the killed server stays a zombie
 * until its parent reaps it, and signal 0 still reaches a zombie. A lock
 * held by a zombie is stale (the restart takes it over); one held by a
 * running process is not. The zombie here is real: a shell starts a short
 * child and then becomes a `sleep` that never waits for it.
 */
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { acquireLock, isAlive, lockHolder, processState, readLock } from '../../src/persist/dataDirLock.js'
import { tempDataDir } from '../helpers/server.js'

/** A shell that starts `sleep 0` in the background, prints its pid, and turns into a sleep that never reaps it. */
async function zombieAndParent(): Promise<{ zombie: number; parent: number; stop: () => void }> {
  const shell = spawn('sh', ['-c', 'sleep 0 & echo $!; exec sleep 30'], { stdio: ['ignore', 'pipe', 'ignore'] })
  const stop = () => shell.kill('SIGKILL')
  const line = await new Promise<string>((resolve) => shell.stdout.once('data', (chunk: Buffer) => resolve(chunk.toString().trim())))
  const zombie = Number(line)
  for (let waited = 0; processState(zombie) !== 'Z'; waited += 10) {
    if (waited > 5000) {
      stop()
      throw new Error(`pid ${zombie} did not become a zombie (state ${processState(zombie)})`)
    }
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  return { zombie, parent: shell.pid as number, stop }
}

t.test('a lock whose process is a zombie is taken over; a live holder keeps it', async (t) => {
  const { zombie, parent, stop } = await zombieAndParent()
  t.teardown(stop)
  t.doesNotThrow(() => process.kill(zombie, 0), 'signal 0 still reaches the zombie')
  t.equal(isAlive(zombie), false, 'the zombie is not alive')
  t.equal(isAlive(parent), true, 'its parent is')

  const dataDir = tempDataDir('lock')
  const lockFile = path.join(dataDir, 'server.lock')
  fs.writeFileSync(lockFile, String(zombie))
  t.equal(lockHolder(dataDir), null, 'nobody holds a lock left by a zombie')
  t.doesNotThrow(() => acquireLock(dataDir), 'a restart takes it over')
  t.equal(readLock(dataDir)?.pid, process.pid)

  fs.writeFileSync(lockFile, String(parent))
  t.equal(lockHolder(dataDir), parent)
  t.throws(() => acquireLock(dataDir), new RegExp(`in use by the server with pid ${parent}`), 'a running holder keeps the lock')
})

t.test('the state is read after the last parenthesis of /proc/<pid>/stat', async (t) => {
  const proc = tempDataDir('proc')
  const stat = (pid: number, text: string) => {
    fs.mkdirSync(path.join(proc, String(pid)))
    fs.writeFileSync(path.join(proc, String(pid), 'stat'), text)
  }
  stat(10, '10 (node) Z 1 10 10 0 -1')
  stat(11, '11 (a) Z b) S 1 11 11 0 -1')
  stat(12, 'garbage')
  t.equal(processState(10, proc), 'Z')
  t.equal(processState(11, proc), 'S', 'a command name holding ") Z" does not fool it')
  t.equal(processState(12, proc), null)
  t.equal(processState(13, proc), null, 'no such process')
  t.equal(processState(process.pid), 'R', 'this process runs')
})
