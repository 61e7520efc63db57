/*
 * A server process's resident memory for the benchmarks that measure what
 * one call costs (exports.ts, imports.ts): VmRSS read from
 * /proc/<pid>/status, and a sampler reading it every SAMPLE_MS until stopped
 * that gives the highest value seen.
 */
import fs from 'node:fs'

export const SAMPLE_MS = 20

export function rssOf(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))
  return match === null ? 0 : Number(match[1]) * 1024
}

/** Samples the server's RSS until stopped; gives the highest seen. */
export function rssSampler(pid: number): () => number {
  let peak = rssOf(pid)
  const timer = setInterval(() => (peak = Math.max(peak, rssOf(pid))), SAMPLE_MS)
  return () => {
    clearInterval(timer)
    return Math.max(peak, rssOf(pid))
  }
}
