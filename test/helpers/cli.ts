/*
 * Running the compiled operator CLI (`node dist/src/cli.js <command>`) the
 * way an operator would, with the test environment for a data directory.
 * stdout and stderr are kept apart: progress goes to stderr.
 */
import { execFile } from 'node:child_process'
import path from 'node:path'
import { REPO_ROOT, testEnv } from './server.js'

export interface CliResult {
  code: number
  stdout: string
  stderr: string
}

export function runCli(dataDir: string, args: string[], extra: Record<string, string> = {}): Promise<CliResult> {
  const cli = path.join(REPO_ROOT, 'dist', 'src', 'cli.js')
  return new Promise((resolve) => {
    execFile(process.execPath, [cli, ...args], { env: { ...process.env, ...testEnv(dataDir, extra) }, timeout: 60_000 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1
      resolve({ code, stdout, stderr })
    })
  })
}
