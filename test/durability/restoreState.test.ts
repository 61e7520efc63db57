/*
 * What an online restore sets right besides the tenant's records: the
 * since-snapshot gauge starts again from 0 (the restored state was just
 * written as a snapshot) and counts the writes after it; the global e-mail
 * index forgets the users the restore dropped (register/checkemail and
 * findurl no longer find them) and keeps the others. A client that asks for
 * application/x-ndjson gets progress lines and then the result, or the
 * failure as its last line.
 */
import t from 'tap'
import { adminKeyOf, adminRequest } from '../helpers/admin.js'
import { parseMetrics, samplesOf } from '../helpers/prometheus.js'
import { startInProcess } from '../helpers/server.js'
import { addUser } from '../helpers/users.js'

const server = await startInProcess(undefined, { RATE_LIMIT_REQUESTS: '0' })
t.teardown(() => server.stop())
const { client, service } = server
const key = adminKeyOf(server.dataDir)
const { token } = await client.createTenant('acme')
const seqOf = () => service.services.registry.get('acme')?.state.seq ?? 0
const pointSeq = seqOf()
const late = await addUser(server, 'acme', token, 'Late')
for (const name of ['one', 'two', 'three']) {
  const created = await client.request('POST', '/v1/time/projects', { tenant: 'acme', query: { token }, body: { name } })
  if (created.status !== 201) throw new Error(`create failed: ${created.text}`)
}

async function sinceSnapshot(): Promise<number | undefined> {
  const answer = await adminRequest(service.adminPort, 'GET', '/metrics', key)
  return samplesOf(parseMetrics(answer.text), 'timeledger_tenant_log_entries_since_snapshot', { tenant: 'acme' })[0]?.value
}

const emailKnown = async (email: string) => (await client.request('GET', '/v1/register/checkemail', { query: { apikey: client.apiKey, email } })).json
const tenantOf = async (email: string) => (await client.request('GET', '/v1/register/findurl', { query: { apikey: client.apiKey, email } })).json

/** POST …/restore asking for progress lines; each line parsed. */
async function restoreWithProgress(body: unknown): Promise<{ status: number; type: string; lines: Record<string, unknown>[] }> {
  const response = await fetch(`http://127.0.0.1:${service.adminPort}/tenants/acme/restore`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, accept: 'application/x-ndjson' },
    body: JSON.stringify(body),
  })
  const text = await response.text()
  const lines = text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>)
  return { status: response.status, type: response.headers.get('content-type') ?? '', lines }
}

t.test('before: the writes since the last snapshot are counted, the late user is indexed', async (t) => {
  t.ok(((await sinceSnapshot()) ?? 0) >= 4, 'the user and three projects at least')
  t.same(await emailKnown(late.email), { exists: true })
})

t.test('an online restore with progress lines: progress, then the result last', async (t) => {
  const { status, type, lines } = await restoreWithProgress({ toSeq: pointSeq })
  t.equal(status, 200)
  t.match(type, /^application\/x-ndjson/)
  const last = lines.at(-1) as { result?: Record<string, unknown> }
  t.match(last.result, { tenant: 'acme', pointSeq, seq: Number }, 'the result is the last line')
  const progress = lines.slice(0, -1).map((line) => line.progress)
  t.ok(
    progress.every((line) => typeof line === 'string'),
    'every other line is a progress line',
  )
  t.match(progress, [/^restore acme: rebuilding/], 'the first line comes at once')
  t.ok(
    progress.some((line) => /^replay acme {2}\d+ log entries in /.test(String(line))),
    'the replay reports its count and time',
  )
  t.ok(
    progress.some((line) => /^swap acme: /.test(String(line))),
    'the swap is announced',
  )
  t.ok(
    progress.some((line) => /^snapshot acme {2}\d+ records in /.test(String(line))),
    'the snapshot write reports its count and time',
  )
})

t.test('after it: nothing since the snapshot, then each write counts again', async (t) => {
  t.equal(await sinceSnapshot(), 0, 'the restored state was just written as a snapshot')
  const again = await client.login('acme', 'owner@acme.test', 'secret-password') // a restore ends every session
  t.equal(await sinceSnapshot(), 1, 'the login is a write')
  const created = await client.request('POST', '/v1/time/projects', { tenant: 'acme', query: { token: again }, body: { name: 'after' } })
  t.equal(created.status, 201)
  t.equal(await sinceSnapshot(), 2)
})

t.test('the e-mail index forgets the users the restore dropped, and keeps the others', async (t) => {
  t.same(await emailKnown(late.email), { exists: false }, 'the late user is gone from register/checkemail')
  t.same(await tenantOf(late.email), { url: null }, '… and from findurl')
  t.same(await emailKnown('owner@acme.test'), { exists: true }, 'the owner, in the restored state, stays')
  t.match(await tenantOf('owner@acme.test'), { url: /acme/ })
})

t.test('with progress lines, a refusal during the work is the last line, with its error body', async (t) => {
  const { status, lines } = await restoreWithProgress({ toSeq: 999_999 })
  t.equal(status, 200, 'the answer had begun')
  const last = lines.at(-1) as { error?: Record<string, unknown> }
  t.match(last.error, { status: 400, code: 'TL01-1105', message: /seq 999999 cannot be restored; reachable: seq 1\.\./ })
  const early = await restoreWithProgress({ toSeq: 'one' })
  t.equal(early.status, 400, 'input refused before the work starts gets its usual status')
  t.match(early.lines[0], { code: 'TL01-1105' })
})
