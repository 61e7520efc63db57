/*
 * The interactive reference in a real browser: Debian's chromium driven by
 * puppeteer-core opens /docs on a tenant's address of a running server,
 * finds the Project operations listed, authorizes with an access token
 * through the page's Authorize dialog, runs "try it" on the project list
 * and sees the answer — the project made before — shown in the page.
 * Nothing the page loads may come from another host, and the page's
 * Content-Security-Policy refuses nothing it does.
 *
 * The first screen (every tag listed) comes from the description's outline
 * alone (issue 38: the whole description took Swagger UI seconds): the
 * page never fetches the whole document, and a tag's operations are
 * fetched when it is opened, by a click or by a deep link. How long the
 * first screen took is told (a comment), not asserted: the machine is
 * shared. Then the same on the public address
 * (`http://localhost:<port>/docs`): its first server is the tenant by path
 * (`/tenant/{tenant}/v1`), the tenant's name typed in its field, and
 * "try it" calls the tenant through the public address.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import puppeteer, { type Browser, type Page } from 'puppeteer-core'
import t from 'tap'
import { startInProcess } from '../helpers/server.js'
import { installed, installedProgram } from '../helpers/systemPrograms.js'

if (installed(t, ['chromium'])) {
  const server = await startInProcess()
  t.teardown(() => server.stop())
  const { client } = server
  const { token } = await client.createTenant('browse')
  const made = await client.request('POST', '/v1/time/projects', { tenant: 'browse', query: { token }, body: { name: 'Seen from the browser' } })
  if (made.status !== 201) throw new Error(`the project was not made: ${made.text}`)

  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'timeledger-chromium-'))
  t.teardown(() => fs.rmSync(profile, { recursive: true, force: true }))
  const browser: Browser = await puppeteer.launch({
    executablePath: installedProgram('chromium'),
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      `--user-data-dir=${profile}`,
      // Tenants are told apart by host: every *.localhost is this machine (chromium does so too; made explicit).
      '--host-resolver-rules=MAP *.localhost 127.0.0.1, MAP localhost 127.0.0.1',
    ],
  })
  t.teardown(() => browser.close())

  const origin = `http://browse.localhost:${client.port}`
  const page: Page = await browser.newPage()
  const requestedHosts = new Set<string>()
  /** The parts of the description the page fetched (`?tags=…`; '' for the whole document), in order. */
  const documentsFetched: string[] = []
  const documentQuery = (url: URL) => (url.pathname === '/v1/openapi.json' ? url.search : null)
  page.on('request', (request) => {
    // data: URLs (Swagger UI's inline images) come from nowhere.
    const url = new URL(request.url())
    if (url.protocol !== 'data:') requestedHosts.add(url.host)
    const query = documentQuery(url)
    if (query !== null) documentsFetched.push(query)
  })
  // The page runs under its Content-Security-Policy: anything it refuses is told on the console.
  const refusedByPolicy: string[] = []
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) refusedByPolicy.push(message.text().replace(/\s+/g, ' '))
  })
  page.setDefaultTimeout(60_000)

  t.test('the first screen lists every tag from the outline; a tag opened fetches its operations', async (t) => {
    const startedMs = Date.now()
    const loaded = await page.goto(`${origin}/docs`, { waitUntil: 'domcontentloaded' })
    t.match(loaded?.headers()['content-security-policy'], /frame-ancestors 'none'/, 'the page has its policy')
    await page.waitForSelector('#operations-tag-Project')
    t.comment(`the first screen (every tag listed) after ${Date.now() - startedMs} ms`)
    t.same(documentsFetched, ['?tags='], 'shown from the outline alone')
    const tags = await page.$$eval('.opblock-tag-section', (elements) => elements.length)
    t.ok(tags > 30, `every tag listed (${tags})`)
    t.equal((await page.$$('.opblock')).length, 0, 'no operation yet')
    const title = await page.$eval('.info .title', (element) => element.textContent ?? '')
    t.match(title, /TimeLedger API/)
    await page.click('#operations-tag-Project')
    await page.waitForSelector('#operations-Project-getTimeProjects')
    t.same(documentsFetched, ['?tags=', '?tags=Project'], "the tag's operations were fetched when it was opened")
    const summaries = await page.$$eval('[id^="operations-Project-"] .opblock-summary-path', (elements) => elements.map((element) => element.textContent?.replace(/\u200b/g, '') ?? ''))
    t.ok(summaries.includes('/time/projects'), 'the project list')
    t.ok(summaries.includes('/time/projects/{id}'), 'one project')
  })

  t.test('"try it" with the token entered in the Authorize dialog', async (t) => {
    await page.click('.auth-wrapper .authorize')
    await page.waitForSelector('.modal-ux')
    // The first scheme of the dialog is the token in the query (`token`).
    const tokenInput = await page.waitForSelector('.modal-ux .auth-container input[type="text"]')
    await tokenInput?.type(token)
    await page.click('.modal-ux .auth-container .auth-btn-wrapper .authorize')
    await page.waitForSelector('.modal-ux .auth-container .btn-done, .modal-ux .auth-container button.logout')
    await page.click('.modal-ux .close-modal')

    await page.click('#operations-Project-getTimeProjects .opblock-summary-control')
    await page.waitForSelector('#operations-Project-getTimeProjects .try-out__btn')
    await page.click('#operations-Project-getTimeProjects .try-out__btn')
    await page.waitForSelector('#operations-Project-getTimeProjects .execute')
    await page.click('#operations-Project-getTimeProjects .execute')
    const live = '#operations-Project-getTimeProjects .live-responses-table tbody tr.response'
    await page.waitForSelector(`${live} td.response-col_status`)
    const status = await page.$eval(`${live} td.response-col_status`, (element) => element.textContent?.trim() ?? '')
    t.equal(status, '200', 'the call answered 200')
    const shown = await page.$eval(`${live} td.response-col_description`, (element) => element.textContent ?? '')
    t.match(shown, /Seen from the browser/, 'the answer shows the project')
    const requestUrl = await page.$eval('#operations-Project-getTimeProjects .request-url pre', (element) => element.textContent ?? '')
    t.match(requestUrl, new RegExp(`^${origin}/v1/time/projects\\?.*token=`), 'called on the tenant’s own address with the token')
  })

  t.test('a deep link to an operation opens its tag and shows it', async (t) => {
    const linked = await browser.newPage()
    t.teardown(() => linked.close())
    const fetched: string[] = []
    linked.on('request', (request) => {
      const query = documentQuery(new URL(request.url()))
      if (query !== null) fetched.push(query)
    })
    await linked.goto(`${origin}/docs#/Task/getTimeTasks`, { waitUntil: 'domcontentloaded' })
    await linked.waitForSelector('#operations-Task-getTimeTasks .opblock-body', { timeout: 60_000 })
    t.same(fetched, ['?tags=', '?tags=Task'], 'the outline, then the linked tag')
  })

  t.test('nothing came from another host, and the whole description was never fetched', async (t) => {
    t.same([...requestedHosts], [`browse.localhost:${client.port}`])
    t.notOk(documentsFetched.includes(''), 'only parts of it')
  })

  t.test('on the public address, "try it" calls the tenant named in the server field, by path', async (t) => {
    const publicOrigin = `http://localhost:${client.port}`
    const publicPage: Page = await browser.newPage()
    publicPage.setDefaultTimeout(60_000)
    await publicPage.goto(`${publicOrigin}/docs`, { waitUntil: 'load' })
    await publicPage.waitForSelector('#operations-tag-Project')
    const firstServer = await publicPage.$eval('.servers select', (element) => (element as HTMLSelectElement).value)
    t.equal(firstServer, '/tenant/{tenant}/v1', 'the first server names the tenant in the path')
    const variable = await publicPage.waitForSelector('.servers input[type="text"]')
    await variable?.click({ count: 3 })
    await variable?.type('browse')
    await publicPage.click('.auth-wrapper .authorize')
    const tokenInput = await publicPage.waitForSelector('.modal-ux .auth-container input[type="text"]')
    await tokenInput?.type(token)
    await publicPage.click('.modal-ux .auth-container .auth-btn-wrapper .authorize')
    await publicPage.waitForSelector('.modal-ux .auth-container .btn-done, .modal-ux .auth-container button.logout')
    await publicPage.click('.modal-ux .close-modal')
    await publicPage.click('#operations-tag-Project')
    await publicPage.waitForSelector('#operations-Project-getTimeProjects')
    await publicPage.click('#operations-Project-getTimeProjects .opblock-summary-control')
    await publicPage.waitForSelector('#operations-Project-getTimeProjects .try-out__btn')
    await publicPage.click('#operations-Project-getTimeProjects .try-out__btn')
    await publicPage.waitForSelector('#operations-Project-getTimeProjects .execute')
    await publicPage.click('#operations-Project-getTimeProjects .execute')
    const live = '#operations-Project-getTimeProjects .live-responses-table tbody tr.response'
    await publicPage.waitForSelector(`${live} td.response-col_status`)
    t.equal(await publicPage.$eval(`${live} td.response-col_status`, (element) => element.textContent?.trim() ?? ''), '200', 'the call answered 200')
    t.match(await publicPage.$eval(`${live} td.response-col_description`, (element) => element.textContent ?? ''), /Seen from the browser/, 'the answer shows the project')
    const requestUrl = await publicPage.$eval('#operations-Project-getTimeProjects .request-url pre', (element) => element.textContent ?? '')
    t.match(requestUrl, new RegExp(`^${publicOrigin}/tenant/browse/v1/time/projects\\?.*token=`), 'called through the public address, the tenant in the path')
  })

  t.test('the Content-Security-Policy refused nothing the page needs', async (t) => {
    t.same(refusedByPolicy, [])
  })
}
