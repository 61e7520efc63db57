/*
 * Lines handed from work in progress to a streamed admin answer: the work
 * push()es lines whenever it likes and end()s once; the answer reads them
 * in order as an async iterable, waiting while there is none. The work never
 * waits for the reader, so a client that goes away cannot stall it (its
 * lines are read and dropped by the listener).
 */
import { assert } from '../assert.js'

export class LineStream implements AsyncIterable<string> {
  private readonly pending: string[] = []
  private ended = false
  private wake: (() => void) | null = null

  push(line: string): void {
    assert(!this.ended, 'a line pushed after the end of its stream')
    this.pending.push(line.endsWith('\n') ? line : `${line}\n`)
    this.wakeReader()
  }

  end(): void {
    this.ended = true
    this.wakeReader()
  }

  async *[Symbol.asyncIterator](): AsyncIterator<string> {
    for (;;) {
      const line = this.pending.shift()
      if (line !== undefined) {
        yield line
        continue
      }
      if (this.ended) return
      await new Promise<void>((resolve) => (this.wake = resolve))
    }
  }

  private wakeReader(): void {
    const wake = this.wake
    this.wake = null
    wake?.()
  }
}
