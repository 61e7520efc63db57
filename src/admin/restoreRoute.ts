/*
 * Online restore on the admin listener:
 *
 *   POST /tenants/:tenant/restore   body {"from": "<snapshot file on this host>"[, "as": "<tenant>"]}
 *                                        | {"toSeq": n} | {"toTime": "<ISO time>"}
 *
 * A snapshot taken of another tenant is refused (400) unless "as" names
 * the tenant restored (tenants/restoreSource.ts); an export file is refused naming
 * the import command.
 *
 * The restore itself is tenants/onlineRestore.ts: the new state is
 * rebuilt (a slice per event-loop turn; only the decoding of a snapshot
 * file is done in one piece) while the tenant and all others keep serving,
 * then written as a snapshot and swapped in: the tenant actor's exclusive
 * job only places that snapshot and puts the state in place. A tenant that
 * cannot be opened (its log is damaged) gets 503 until the snapshot is in
 * place; then its next request activates the restored state.
 *
 * Answers 200 {tenant, seq, previousLastSeq, objects, restored, pointSeq,
 * file, at, bytes, durationMs, swapMs (how long the swap held the tenant)}; a point outside the history or a bad snapshot file is a 400
 * naming what is reachable, a log that cannot be replayed to the point a
 * 412, a restore of the same tenant already running a 412 too.
 *
 * Progress. A client that sends `Accept: application/x-ndjson` gets the
 * answer as JSON lines while the work runs: `{"progress": "<text>"}` for each
 * progress line (the plain lines of src/progress.ts: the load, the replay and
 * the snapshot write, each with its final count and time, and the wait for
 * the swap), then exactly one last line, `{"result": {...}}` with the answer
 * above or `{"error": {...}}` with the error body (which has the `status`). Input
 * that is refused before the work starts (bad body, unknown tenant, a
 * restore already running) gets its usual 4xx answer instead.
 */
import { ApiError } from '../domain/errors.js'
import type { OnlineRestores } from '../tenants/onlineRestore.js'
import { parseRestoreSource, type RestoreSource } from '../tenants/restoreSource.js'
import { restoreErrorAsApiError } from '../http/refusalAnswers.js'
import { progress } from '../progress.js'
import { answerForError, jsonAnswer, type AdminRequest, type AdminServer } from './adminServer.js'
import { LineStream } from './lineStream.js'

const PROGRESS_LINES_TYPE = 'application/x-ndjson'

function sourceOf(request: AdminRequest): RestoreSource {
  let body: unknown
  try {
    body = JSON.parse(request.body.toString('utf8'))
  } catch {
    throw new ApiError('TL01-1105', 'the body must be JSON: {"from": file} or {"toSeq": n} or {"toTime": ISO time}')
  }
  if (typeof body !== 'object' || body === null) throw new ApiError('TL01-1105', 'the body must be a JSON object')
  const { from, toSeq, toTime, as } = body as Record<string, unknown>
  const text = (value: unknown): string | undefined => (value === undefined || value === null ? undefined : String(value))
  try {
    return parseRestoreSource({ from: text(from), toSeq: text(toSeq), toTime: text(toTime), as: text(as) })
  } catch (error) {
    throw restoreErrorAsApiError(error)
  }
}

export function registerRestoreRoute(admin: AdminServer, restores: OnlineRestores): void {
  admin.route('POST', '/tenants/:tenant/restore', async (request) => {
    const tenant = request.params.tenant as string
    const source = sourceOf(request)
    const restore = await restores.begin(tenant)
    if (!(request.headers.get('accept') ?? '').includes(PROGRESS_LINES_TYPE)) {
      try {
        return jsonAnswer(200, await restore(source))
      } catch (error) {
        throw restoreErrorAsApiError(error)
      }
    }
    const lines = new LineStream()
    const say = (text: string) => lines.push(JSON.stringify({ progress: text }))
    const sink = {
      isTTY: false,
      write: (text: string) =>
        text
          .split('\n')
          .filter((line) => line !== '')
          .forEach(say),
    }
    say(`restore ${tenant}: rebuilding the state`)
    restore(source, { startProgress: (label, unit, total) => progress(label, unit, total, sink), note: say })
      .then(
        (answer) => lines.push(JSON.stringify({ result: answer })),
        (error: unknown) => {
          const failed = answerForError(restoreErrorAsApiError(error), request.method, request.path)
          lines.push(`{"error":${String(failed.body)}}`)
        },
      )
      .finally(() => lines.end())
    return { status: 200, headers: { 'Content-Type': `${PROGRESS_LINES_TYPE}; charset=utf-8` }, chunks: lines }
  })
}
