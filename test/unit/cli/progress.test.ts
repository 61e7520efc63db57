/*
 * The progress line of long CLI work: on a terminal one line redrawn with
 * \r (bar, count, rate, time left), elsewhere a plain line every few
 * seconds; always a final line with the count and the time taken.
 */
import t from 'tap'
import { progress, progressAfter } from '../../../src/progress.js'

function fakeSink(isTTY: boolean): { isTTY: boolean; text: string; write(chunk: string): void } {
  return {
    isTTY,
    text: '',
    write(chunk) {
      this.text += chunk
    },
  }
}

t.test('on a terminal: redrawn in place with bar, rate and time left', async (t) => {
  const sink = fakeSink(true)
  let nowMs = 0
  const bar = progress('replay acme', 'entries', 1000, sink, () => nowMs)
  nowMs = 50
  bar.update(100)
  t.equal(sink.text, '', 'nothing within the first redraw interval')
  nowMs = 1000
  bar.update(250)
  t.equal(sink.text, '\rreplay acme  [######------------------]  25%  250/1000 entries  250 entries/s  3s left\x1b[K')
  nowMs = 2000
  bar.update(1000)
  bar.finish()
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the line ends with the terminal's erase-to-end-of-line (ESC [K)
  t.match(sink.text, /\rreplay acme {2}1000 entries in 2s\x1b\[K\n$/)
  t.equal(sink.text.split('\n').length, 2, 'one line in the end')
})

t.test('not a terminal: a plain line every few seconds, then the summary', async (t) => {
  const sink = fakeSink(false)
  let nowMs = 0
  const lines = progress('export acme', 'records', null, sink, () => nowMs)
  for (let second = 1; second <= 12; second += 1) {
    nowMs = second * 1000
    lines.update(second * 10)
  }
  lines.finish('done')
  t.same(sink.text.trimEnd().split('\n'), ['export acme  50 records  10 records/s', 'export acme  100 records  10 records/s', 'export acme  120 records in 12s  done'])
})

t.test('short work prints only the final line', async (t) => {
  const sink = fakeSink(false)
  const quick = progress('import x', 'records', 10, sink, () => 0)
  quick.update(10)
  quick.finish()
  t.equal(sink.text, 'import x  10 records in 0ms\n')
})

t.test('progressAfter: nothing for work within its grace time; past it, shown from the start of the work', async (t) => {
  const quickSink = fakeSink(false)
  let nowMs = 0
  const quick = progressAfter(1000, 'load small', 'records', null, quickSink, () => nowMs)
  nowMs = 400
  quick.update(500)
  nowMs = 900
  quick.finish()
  t.equal(quickSink.text, '', 'a load of 0.9 s says nothing, not even its final line')

  const slowSink = fakeSink(false)
  nowMs = 0
  const slow = progressAfter(1000, 'load big', 'records', null, slowSink, () => nowMs)
  for (let second = 1; second <= 11; second += 1) {
    nowMs = second * 1000
    slow.update(second * 100_000)
  }
  slow.finish()
  t.same(slowSink.text.trimEnd().split('\n'), ['load big  500000 records  100000 records/s', 'load big  1000000 records  100000 records/s', 'load big  1100000 records in 11s'])

  const lateSink = fakeSink(true)
  nowMs = 0
  const late = progressAfter(1000, 'load late', 'records', 10, lateSink, () => nowMs)
  late.update(4)
  nowMs = 3000
  late.finish()
  t.equal(lateSink.text, 'load late  4 records in 3s\n', 'work that passed its grace time between two updates gets its final line, with the last count')
})
