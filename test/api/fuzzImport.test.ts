/*
 * HTTP fuzzing of the import (`POST /v1/import/{source}`): the tools'
 * export files of test/fixtures/imports/, mutated a few characters at a
 * time (quotes, delimiters, line breaks, dates, numbers, cut and repeated
 * pieces) and now and then given odd options (dry_run, delimiter,
 * date_format, a mapping), posted to each source as a dry run or for real.
 *
 * Checks: never a 5xx; every refusal has the error body of ARCHITECTURE.md
 * §4, and a line it names is a line of the file; a refused import
 * stores nothing (the tenant's log sequence stays); a dry run never
 * stores; an accepted import is one log entry. FUZZ_INPUTS / FUZZ_SEED:
 * see helpers/fuzz.ts.
 */
import fs from 'node:fs'
import t from 'tap'
import { expectWithSeed, fuzzInputs, fuzzSeed, isErrorBody, mutateMany, Random } from '../helpers/fuzz.js'
import { startInProcess } from '../helpers/server.js'
import { addUser } from '../helpers/users.js'

const INPUTS = fuzzInputs(300)
const seed = fuzzSeed()
const random = new Random(seed)
t.comment(`fuzz seed ${seed} (FUZZ_SEED=${seed} repeats this run), ${INPUTS} inputs`)

const server = await startInProcess(undefined, { RATE_LIMIT_REQUESTS: '0' })
t.teardown(() => server.stop())
const tenant = 'fzi'
const { token } = await server.client.createTenant(tenant, `ada@${tenant}.test`)
await server.client.request('PUT', '/v1/users/@self', { tenant, query: { token, version_ignore: true }, body: { firstName: 'Ada', lastName: 'Lovelace' } })
await addUser(server, tenant, token, 'Bob')
const actor = server.service.services.registry.get(tenant)
if (actor === undefined) throw new Error('no tenant')

const files: [string, string][] = [
  ['toggl', 'toggl-detailed.csv'],
  ['clockify', 'clockify-detailed.csv'],
  ['harvest', 'harvest-detailed-time.csv'],
  ['kimai', 'kimai-export.csv'],
].map(([source, name]) => [source as string, fs.readFileSync(new URL(`../fixtures/imports/${name}`, import.meta.url), 'utf8').replaceAll('@acme.test', `@${tenant}.test`)])

/** The lines of a file as an editor counts them (any kind of line break). */
const linesOf = (text: string) => text.split(/\r\n|\r|\n/).length

/** Pieces the mutations insert: what CSV, dates, times and durations are made of. */
const TOKENS = ['"', '""', ',', ';', '\t', '\n', '\r\n', '\r', ':', '.', '/', '-', 'AM', 'PM', '24:00', '99', '2025-02-30', '13/13/2025', '1e9', '\u0000', '\ufeff', '\ud800', 'é', '=1+1', '__proto__']
const OPTIONS: Record<string, string>[] = [
  {},
  { dry_run: 'true' },
  { dry_run: 'true', preview: '100' },
  { delimiter: ';' },
  { delimiter: 'tab' },
  { date_format: 'DD/MM/YYYY' },
  { unknown_users: 'self' },
  { duration_unit: 'minutes' },
  { 'map.task': 'Project' },
  { time_zone: 'Pacific/Chatham' },
]

t.test('mutated export files: no 5xx, refusals in the error body, nothing stored but by an accepted import', async (t) => {
  let accepted = 0
  let refused = 0
  let lineNamed = 0
  for (let input = 0; input < INPUTS; input += 1) {
    const [source, text] = random.pick(files)
    const body = mutateMany(random, text, TOKENS)
    const query = random.pick(OPTIONS)
    const before = actor.state.seq
    const answer = await server.client.request('POST', `/v1/import/${source}`, { tenant, query: { token, ...query }, rawBody: body, headers: { 'content-type': 'text/csv' } })
    const what = { source, query, body }
    if (!expectWithSeed(t, answer.status < 500, seed, `a 5xx: ${answer.text.slice(0, 300)}`, what)) break
    const stored = actor.state.seq - before
    if (answer.status >= 400) {
      refused += 1
      if (!expectWithSeed(t, isErrorBody(answer.json, answer.status), seed, `no error body: ${answer.text.slice(0, 300)}`, what)) break
      if (!expectWithSeed(t, stored === 0, seed, 'a refused import stored something', what)) break
      const named = /^line (\d+)\b/.exec(String(answer.json.message))
      if (named !== null) {
        lineNamed += 1
        const line = Number(named[1])
        if (!expectWithSeed(t, line >= 1 && line <= linesOf(body), seed, `line ${line} of a file of ${linesOf(body)} lines: ${answer.json.message}`, what)) break
      }
      continue
    }
    accepted += 1
    const expected = query.dry_run === 'true' ? 0 : 1
    if (!expectWithSeed(t, answer.status === (expected === 0 ? 200 : 201) && stored === expected, seed, `${answer.status}, ${stored} entries logged`, what)) break
  }
  t.ok(refused > 0, `${refused} refused`)
  t.ok(lineNamed > 0, `${lineNamed} of them naming a line`)
  t.ok(accepted > 0, `${accepted} accepted`)
})
