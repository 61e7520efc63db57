/*
 * The change feed's WebSocket outlet (src/http/changes/webSocketFeed.ts)
 * on a fake uWS socket that records its corks and sends: the events sent to
 * a socket in one round are handed to uWS at the end of the round, inside
 * one cork (one system call), each still a message of its own and in order
 * (a lone one without a cork: one system call either way);
 * past SOCKET_BUFFER_BYTES held by uWS they wait in the outlet until the
 * socket drains; a message uWS drops closes the stream as too slow.
 */
import t from 'tap'
import type { WebSocket } from 'uWebSockets.js'
import { FeedBudget } from '../../../src/http/changes/feedBudget.js'
import type { FeedMessage } from '../../../src/http/changes/feedOutlet.js'
import { SOCKET_BUFFER_BYTES, WebSocketOutlet, type FeedSocketData } from '../../../src/http/changes/webSocketFeed.js'

const SENT = 1
const DROPPED = 2

/** What a socket saw: its corks, each with the messages sent inside it; messages sent outside a cork; its end. */
class FakeSocket {
  corks: string[][] = []
  uncorked: string[] = []
  ended: number | null = null
  buffered = 0
  answer = SENT
  private inCork: string[] | null = null
  getBufferedAmount(): number {
    return this.buffered
  }
  cork(handler: () => void): this {
    this.inCork = []
    handler()
    this.corks.push(this.inCork)
    this.inCork = null
    return this
  }
  send(message: Buffer): number {
    const text = message.toString()
    if (this.inCork !== null) this.inCork.push(text)
    else this.uncorked.push(text)
    return this.answer
  }
  end(code: number): void {
    this.ended = code
  }
}

function outletOn(socket: FakeSocket, budget = new FeedBudget(0)): WebSocketOutlet {
  return new WebSocketOutlet(socket as unknown as WebSocket<FeedSocketData>, 1024, budget)
}

const message = (json: string): FeedMessage => ({ json })
const roundEnd = () => new Promise((resolve) => setImmediate(resolve))

t.test("a round's events reach each socket in one cork, one message each, in order", async (t) => {
  const one = new FakeSocket()
  const other = new FakeSocket()
  const first = outletOn(one)
  const second = outletOn(other)
  const shared = message('{"seq":2}')
  first.send(message('{"seq":1}'))
  first.send(shared)
  second.send(shared)
  first.send(message('{"seq":3}'))
  t.same(one.corks, [], 'nothing is written during the round')
  t.equal(first.bufferedBytes(), 27, 'but it counts as waiting for the client')
  await roundEnd()
  t.same(one.corks, [['{"seq":1}', '{"seq":2}', '{"seq":3}']])
  t.same(one.uncorked, [], 'nothing of them is sent outside the cork')
  t.same(other.corks, [], 'a lone message needs no cork')
  t.same(other.uncorked, ['{"seq":2}'])
  t.equal(first.bufferedBytes(), 0)
  first.send(message('{"seq":4}'))
  first.send(message('{"seq":5}'))
  await roundEnd()
  t.same(
    one.corks,
    [
      ['{"seq":1}', '{"seq":2}', '{"seq":3}'],
      ['{"seq":4}', '{"seq":5}'],
    ],
    'the next round is a cork of its own',
  )
})

t.test('past SOCKET_BUFFER_BYTES held by uWS, events wait in the outlet until the socket drains', async (t) => {
  const socket = new FakeSocket()
  const outlet = outletOn(socket)
  socket.buffered = SOCKET_BUFFER_BYTES
  outlet.send(message('{"seq":1}'))
  outlet.send(message('{"seq":2}'))
  await roundEnd()
  t.same(socket.corks, [], 'uWS holds enough already')
  t.equal(outlet.bufferedBytes(), SOCKET_BUFFER_BYTES + 18)
  socket.buffered = 0
  outlet.onDrain()
  t.same(socket.corks, [['{"seq":1}', '{"seq":2}']], 'handed on in one cork as the socket drains')
})

t.test('a message uWS drops closes the stream as too slow (4409), so the client never sees a gap', async (t) => {
  const socket = new FakeSocket()
  const outlet = outletOn(socket)
  socket.answer = DROPPED
  outlet.send(message('{"seq":1}'))
  outlet.send(message('{"seq":2}'))
  await roundEnd()
  t.same(socket.corks, [['{"seq":1}']], 'nothing after the dropped message')
  t.equal(socket.ended, 4409)
  t.equal(outlet.bufferedBytes(), 0)
})
