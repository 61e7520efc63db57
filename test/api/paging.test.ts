/*
 * Paging headers over HTTP: `$inlinecount=allpages` gives the count of the
 * whole filtered list in X-Total-Count (the body stays the page), and
 * `Link` names the next page when this one is full and the previous one
 * when `$skip` is above 0; following the links walks the list.
 */
import t from 'tap'
import { api, newUser } from '../helpers/api.js'
import { expectError } from '../helpers/identity.js'
import { startInProcess } from '../helpers/server.js'

const server = await startInProcess()
t.teardown(() => server.stop())
const { client } = server
const { token } = await client.createTenant('pages')
const owner = api(client, 'pages', token)

// Seven projects, four of them billable.
for (let index = 1; index <= 7; index += 1) await owner.create('time/projects', { name: `P${index}`, billable: index % 2 === 1 })
const BILLABLE = 'billable eq true'

/** The targets of a Link header by relation. */
function links(header: string | string[] | undefined): Map<string, string> {
  const found = new Map<string, string>()
  if (typeof header !== 'string') return found
  for (const part of header.split(/,\s*(?=<)/)) {
    const match = /^<([^>]*)>;\s*rel="([a-z]+)"$/.exec(part.trim())
    if (match === null) throw new Error(`malformed Link part: ${part}`)
    found.set(match[2] as string, match[1] as string)
  }
  return found
}

/** A GET of a root-relative target as the Link header gives it, the token sent as a header (a link carries none). */
const follow = (target: string) => client.request('GET', target, { tenant: 'pages', headers: { authorization: `Bearer ${token}` } })
const names = (rows: { name: string }[]) => rows.map((row) => row.name)

t.test('X-Total-Count counts the whole filtered list, the body stays the page', async (t) => {
  const page = await owner.get('time/projects', { $filter: BILLABLE, $orderby: 'name', $top: 3, $inlinecount: 'allpages' })
  t.equal(page.status, 200)
  t.same(names(page.json), ['P1', 'P3', 'P5'], 'the body is the page, an array as before')
  t.equal(page.headers['x-total-count'], '4', 'four billable projects in all')
  const all = await owner.get('time/projects', { $top: 2, $inlinecount: 'allpages' })
  t.equal(all.headers['x-total-count'], '7', 'seven without the filter')
  t.equal((await owner.get('time/projects', { $top: 2 })).headers['x-total-count'], undefined, 'not asked: not counted')
  t.equal((await owner.get('time/projects', { $top: 2, $inlinecount: 'none' })).headers['x-total-count'], undefined, 'none: not counted')
  const count = await owner.get('time/projects/$count', { $filter: BILLABLE })
  t.equal(count.text, '4', 'the same number as $count')
  const empty = await owner.get('time/projects', { $filter: "name eq 'nothing'", $inlinecount: 'allpages' })
  t.same(empty.json, [])
  t.equal(empty.headers['x-total-count'], '0')
})

t.test('X-Total-Count counts what the caller may see', async (t) => {
  const other = await newUser(client, 'pages', owner, 'Nora')
  // Personal: only Nora sees it (and not billable: the billable pages below stay as they are).
  await other.api.create('time/projects', { name: 'Nora private', billable: false, personal: true })
  const asOwner = await owner.get('time/projects', { $inlinecount: 'allpages', $top: 1000 })
  const asOther = await other.api.get('time/projects', { $inlinecount: 'allpages', $top: 1000 })
  t.equal(asOwner.headers['x-total-count'], '7', "the owner does not see Nora's personal project")
  t.equal(asOther.headers['x-total-count'], '8', 'Nora sees it')
  t.equal(Number(asOwner.headers['x-total-count']), asOwner.json.length, "the owner's total is the length of the owner's whole list")
  t.equal(Number(asOther.headers['x-total-count']), asOther.json.length, "the user's total is the length of the user's whole list")
  const own = await other.api.get('time/projects/@own', { $inlinecount: 'allpages' })
  t.equal(own.headers['x-total-count'], String(own.json.length), 'a view counts its own records')
})

t.test('a bad $inlinecount is refused', async (t) => {
  expectError(t, await owner.get('time/projects', { $inlinecount: 'some' }), 400, 'TL01-1105')
})

t.test('Link: next only on a full page, pointing to the page after it; prev past the first', async (t) => {
  const query = { $filter: BILLABLE, $orderby: 'name', $top: 2 }
  const first = await owner.get('time/projects', query)
  t.same(names(first.json), ['P1', 'P3'])
  const firstLinks = links(first.headers.link)
  t.notOk(firstLinks.has('prev'), 'no prev on the first page')
  const next = firstLinks.get('next')
  if (next === undefined) throw new Error('no next link on a full page')
  t.match(next, /^\/v1\/time\/projects\?/, 'root-relative')
  t.match(next, /[?&]\$skip=2(&|$)/, '$skip moved by the page size')
  t.match(next, /[?&]%24filter=billable/, 'the other parameters kept')
  t.notMatch(next, /token/, 'the token is not repeated')

  const second = await follow(next)
  t.equal(second.status, 200)
  t.same(names(second.json), ['P5', 'P7'], 'the next page')
  const secondLinks = links(second.headers.link)
  t.ok(secondLinks.has('next'), 'full again: next (the total is not known)')
  t.match(secondLinks.get('prev') ?? '', /^\/v1\/time\/projects\?(?!.*\$skip=)/, 'prev leads to the first page (no $skip)')
  t.same(names((await follow(secondLinks.get('prev') ?? '')).json), ['P1', 'P3'])

  const third = await follow(secondLinks.get('next') ?? '')
  t.same(third.json, [], 'past the end: an empty page')
  t.notOk(links(third.headers.link).has('next'), 'no next on a page that is not full')

  const partial = await owner.get('time/projects', { $filter: BILLABLE, $orderby: 'name', $top: 3, $skip: 2 })
  t.same(names(partial.json), ['P5', 'P7'])
  t.notOk(links(partial.headers.link).has('next'), 'a page shorter than $top: no next')
  t.match(links(partial.headers.link).get('prev') ?? '', /\$skip=0|^[^$]*$/, 'prev from $skip 2 with $top 3 starts at 0')
})

t.test('Link replaces $skip however it was written, and keeps the rest as written', async (t) => {
  const target = `/v1/time/projects?%24skip=1&token=${token}&%24top=2&%24filter=name%20ne%20'x'`
  const page = await follow(target)
  t.equal(page.status, 200)
  const next = links(page.headers.link).get('next') ?? ''
  t.notMatch(next, /%24skip/, 'the encoded $skip is gone')
  t.match(next, /&\$skip=3$/, 'the new $skip at the end')
  t.match(next, /%24filter=name%20ne%20'x'/, 'the filter as the client wrote it')
  t.match(links(page.headers.link).get('prev') ?? '', /^\/v1\/time\/projects\?%24top=2&%24filter=[^&]+$/, 'prev to the start: no $skip at all (nor the token)')
})

t.test('with the total known, no next after the last full page', async (t) => {
  const last = await owner.get('time/projects', { $filter: BILLABLE, $orderby: 'name', $top: 2, $skip: 2, $inlinecount: 'allpages' })
  t.same(names(last.json), ['P5', 'P7'])
  t.equal(last.headers['x-total-count'], '4')
  t.notOk(links(last.headers.link).has('next'), 'full, but nothing after it')
  t.ok(links(last.headers.link).has('prev'))
  const first = await owner.get('time/projects', { $filter: BILLABLE, $orderby: 'name', $top: 2, $inlinecount: 'allpages' })
  const next = links(first.headers.link).get('next') ?? ''
  t.match(next, /(\$|%24)inlinecount=allpages/, '$inlinecount kept')
  const followed = await follow(next)
  t.same(names(followed.json), ['P5', 'P7'])
  t.equal(followed.headers['x-total-count'], '4', 'the next page counts the same total')
})

t.test('walking the links visits every record once', async (t) => {
  const seen: string[] = []
  let target: string | undefined = `/v1/time/projects?token=${token}&%24orderby=name&%24top=3`
  let pages = 0
  while (target !== undefined && pages < 10) {
    const page = await follow(target)
    t.equal(page.status, 200)
    seen.push(...names(page.json))
    target = links(page.headers.link).get('next')
    pages += 1
  }
  const all = await owner.get('time/projects', { $orderby: 'name' })
  t.same(seen, names(all.json), 'the pages joined are the whole list, in order')
  t.ok(pages >= 3, `${pages} pages`)
})

t.test('Link never repeats a credential of the query: the token, the API key, however their names are written', async (t) => {
  const target = `/v1/time/projects?token=${token}&%24top=2&apikey=some-api-key&%74oken=${token}&refresh_token=r3fr3sh&$orderby=name`
  const page = await client.request('GET', target, { tenant: 'pages' })
  t.equal(page.status, 200)
  const header = String(page.headers.link ?? '')
  const next = links(header).get('next') ?? ''
  t.match(next, /^\/v1\/time\/projects\?%24top=2&\$orderby=name&\$skip=2$/, 'the other parameters as written, $skip moved')
  for (const secret of [token, 'some-api-key', 'r3fr3sh']) t.notOk(header.includes(secret), `no ${secret.slice(0, 8)}… in the Link header`)
  const followed = await follow(next)
  t.equal(followed.status, 200, 'the link works with the token sent as a header')
  t.same(names(followed.json), ['P3', 'P4'])
  const prev = links(String(followed.headers.link ?? '')).get('prev') ?? ''
  t.equal(prev, '/v1/time/projects?%24top=2&$orderby=name', 'prev: neither $skip nor any credential')
})
