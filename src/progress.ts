/*
 * Progress of long operator work (snapshot, restore, replay, export,
 * import), written to stderr so stdout stays the command's answer.
 *
 * On a terminal one line is redrawn in place (\r) at most every
 * REDRAW_EVERY_MS: a bar when the total is known, the count, the rate and
 * the remaining time. Elsewhere (a log file, a pipe) a plain line is
 * written every PLAIN_LINE_EVERY_MS, so logs stay readable. `finish` writes
 * the final count and the time taken. Work that ends before the first
 * interval prints only that final line.
 *
 * `progressAfter` is for steps that are usually quick but sometimes long
 * (reading one tenant of many: most take milliseconds, a million records
 * seconds): it says nothing, not even the final line, about work that ends
 * within its grace time, and shows the rest as `progress` does, counted
 * from the start of the work.
 */

const REDRAW_EVERY_MS = 100
const PLAIN_LINE_EVERY_MS = 5000
const BAR_WIDTH = 24

export interface ProgressSink {
  readonly isTTY?: boolean
  write(text: string): unknown
}

export interface Progress {
  /** `done` units so far; `total` may be corrected on the way (null: unknown). */
  update(done: number, total?: number | null): void
  finish(note?: string): void
}

function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`
  const seconds = Math.round(ms / 1000)
  if (seconds < 60) return `${seconds}s`
  const minutes = Math.floor(seconds / 60)
  return minutes < 60 ? `${minutes}m${String(seconds % 60).padStart(2, '0')}s` : `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, '0')}m`
}

/** Starts a progress report; modules that do long work take one of these, so the CLI decides where it goes. */
export type ProgressFactory = (label: string, unit: string, total: number | null) => Progress

export function progress(label: string, unit: string, total: number | null, sink: ProgressSink = process.stderr, now: () => number = Date.now): Progress {
  return progressSince(now(), label, unit, total, sink, now)
}

/** A progress that stays silent while the work is younger than `graceMs`, and entirely when it ends within it. */
export function progressAfter(graceMs: number, label: string, unit: string, total: number | null, sink: ProgressSink = process.stderr, now: () => number = Date.now): Progress {
  const started = now()
  let shown: Progress | null = null
  let latestTotal = total
  let latestDone = 0
  return {
    update(done, newTotal) {
      if (newTotal !== undefined) latestTotal = newTotal
      latestDone = done
      if (shown === null && now() - started < graceMs) return
      shown ??= progressSince(started, label, unit, latestTotal, sink, now)
      shown.update(done, newTotal)
    },
    finish(note) {
      if (shown === null && now() - started >= graceMs) shown = progressSince(started, label, unit, latestTotal, sink, now, latestDone)
      shown?.finish(note)
    },
  }
}

function progressSince(started: number, label: string, unit: string, total: number | null, sink: ProgressSink, now: () => number, doneBefore = 0): Progress {
  const tty = sink.isTTY === true
  let lastShown = started
  let done = doneBefore
  let drawn = false
  const line = (): string => {
    const elapsedMs = Math.max(1, now() - started)
    const ratePerSecond = (done * 1000) / elapsedMs
    const parts = [label]
    if (total !== null && total > 0) {
      const fraction = Math.min(1, done / total)
      if (tty) parts.push(`[${'#'.repeat(Math.round(fraction * BAR_WIDTH)).padEnd(BAR_WIDTH, '-')}]`)
      parts.push(`${Math.floor(fraction * 100)}%`, `${done}/${total} ${unit}`)
    } else {
      parts.push(`${done} ${unit}`)
    }
    parts.push(`${Math.round(ratePerSecond)} ${unit}/s`)
    if (total !== null && total > done && ratePerSecond > 0) parts.push(`${duration(((total - done) / ratePerSecond) * 1000)} left`)
    return parts.join('  ')
  }
  return {
    update(value, newTotal) {
      done = value
      if (newTotal !== undefined) total = newTotal
      const at = now()
      if (at - lastShown < (tty ? REDRAW_EVERY_MS : PLAIN_LINE_EVERY_MS)) return
      lastShown = at
      sink.write(tty ? `\r${line()}\x1b[K` : `${line()}\n`)
      drawn = true
    },
    finish(note) {
      const summary = `${label}  ${done} ${unit} in ${duration(now() - started)}${note === undefined ? '' : `  ${note}`}`
      sink.write(tty && drawn ? `\r${summary}\x1b[K\n` : `${summary}\n`)
    },
  }
}
