/*
 * Parity of the embedded mode and cluster mode (issue 28): a tenant holding
 * every kind of object (users, clients and their contacts, work types,
 * projects with members and work-type links, tasks, time records, an
 * impulse, bills with items and VATs, a price list, departments, accesses,
 * spending time, an external system, a secret key, a trashed project, a
 * storage entry, an uploaded logo and signature) is made on an embedded
 * server, which is then stopped and the tenant exported with the operator
 * CLI. The export is imported into a two-node cluster (the CLI with
 * DATABASE_URL); reads through HAProxy answer what the embedded server
 * answered. Exported again from the cluster and imported into a fresh data
 * directory, then exported from there, the tenant's state is the same in
 * all three export files, collection by collection and record by record,
 * and the uploaded files are the same bytes.
 *
 * Then the other operator commands run once against the cluster store:
 * `history` lists the imported snapshot and the entries of a login through
 * the cluster, `cluster` shows the nodes and the node holding the tenant,
 * and `restore --to-seq` to the newest point history listed takes the
 * tenant back past a project made after it, online in the node holding
 * the tenant (restoreCall.ts; the restore starts from the imported
 * snapshot): the node keeps the tenant and its lease. As every restore, it
 * ends the tenant's sessions; a new login reads it. (`restore --from` a
 * snapshot file, which is on the operator's machine, runs in the CLI as
 * the tenant's writer: the node hands the tenant back meanwhile.)
 */
import fs from 'node:fs'
import path from 'node:path'
import t, { type Test } from 'tap'
import { loadConfig } from '../../src/config.js'
import { decodeExport, type TenantExport } from '../../src/persist/exportFile.js'
import { startService } from '../../src/service.js'
import { api, ref, type Api } from '../helpers/api.js'
import { runCli, type CliResult } from '../helpers/cli.js'
import { leaseRowOf, startCluster, TEST_CLUSTER_SECRET } from '../helpers/cluster.js'
import { TestClient } from '../helpers/http.js'
import { tempDataDir, testEnv, TEST_API_KEY } from '../helpers/server.js'
import { installed } from '../helpers/systemPrograms.js'

if (installed(t, ['postgresql', 'haproxy'])) {
  const TENANT = 'parity'
  const LEASE_MS = 1_500
  /** Printable bytes: the test client sends a raw body as a string. */
  const LOGO = Buffer.from(Array.from({ length: 4_096 }, (_, index) => 32 + ((index * 7) % 95)))
  const SIGNATURE = Buffer.from('a signature, in bytes')
  const exportDir = tempDataDir('parity-exports')
  const exportPath = (name: string) => path.join(exportDir, `${name}.tlexport`)

  /** Makes one object (at least) of every kind; answers the ids the reads need. */
  async function seed(x: Api): Promise<{ me: string; project: string; bill: string; customer: string }> {
    const me = (await x.get('users/@self')).json.id as string
    const user = await x.create('users', { firstName: 'Pat', lastName: 'Parity', email: 'pat@parity.test', password: 'user-password' })
    const workType = await x.create('time/worktypes', { name: 'Design' })
    const customer = await x.create('time/clients', { name: 'Customer Ltd' })
    await x.create(`time/clients/${customer}/contacts`, { firstName: 'Casey', lastName: 'Contact' })
    const project = await x.create('time/projects', { name: 'Website', client: ref(customer) })
    await x.create(`time/projects/${project}/members`, { user: ref(user) })
    await x.create(`time/projects/${project}/worktypelinks`, { workType: ref(workType) })
    const task = await x.create('time/tasks', { name: 'Layout', project: ref(project) })
    for (const [hour, duration] of [
      ['09', 3_600_000],
      ['13', 5_400_000],
    ] as const) {
      await x.create('time/timerecords', { user: ref(me), project: ref(project), task: ref(task), duration, start: `2024-06-10T${hour}:00:00Z`, description: `work at ${hour}` })
    }
    await x.create('time/impulses', { user: ref(me), project: ref(project), mode: 'PAUSE' })
    const bill = await x.create('billing/bills', { client: ref(customer), description: 'June' })
    await x.create(`billing/bills/${bill}/items`, { quantity: 2, unitPrice: 10, description: 'hours' })
    await x.create(`billing/bills/${bill}/items`, { quantity: 1, unitPrice: 99.5, description: 'licence' })
    await x.create(`billing/bills/${bill}/vats`, { vatRate: 20, vatPrice: 4 })
    await x.create('billing/pricelists/time', { price: 42, note: 'standard', project: ref(project) })
    const department = await x.create('departments', { name: 'Studio' })
    await x.create(`departments/${department}/members`, { user: ref(user) })
    await x.create('accesses', { user: ref(user), product: 'TIME' })
    await x.create('spendingtime', { user: ref(user), duration: 1_200_000 })
    await x.create('externalsystems', { name: 'Ledger' })
    const key = await x.post('users/@self/secretkeys', { name: 'build key' })
    if (key.status !== 201) throw new Error(`secret key: ${key.status} ${key.text}`)
    const spare = await x.create('time/projects', { name: 'Abandoned' })
    if ((await x.del(`time/projects/${spare}`)).status !== 200) throw new Error('trashing a project failed')
    const stored = await x.call('POST', 'storage/settings/theme', { rawBody: 'dark', headers: { 'content-type': 'text/plain' } })
    if (stored.status >= 300) throw new Error(`storage: ${stored.status} ${stored.text}`)
    for (const [route, bytes, filename] of [
      ['accounts/@own/logo/upload', LOGO, 'logo.png'],
      [`users/${me}/signature/upload`, SIGNATURE, 'signature.png'],
    ] as const) {
      const upload = await x.call('POST', route, { rawBody: bytes.toString('latin1'), query: { filename }, headers: { 'content-type': 'image/png' } })
      if (upload.status >= 300) throw new Error(`upload ${route}: ${upload.status} ${upload.text}`)
    }
    return { me, project, bill, customer }
  }

  /** The reads compared between the modes: every list, inner collections, summaries, the trash, storage and the files. */
  function readPaths(ids: { me: string; project: string; bill: string; customer: string }): string[] {
    return [
      'users',
      'users/@self',
      'time/clients',
      `time/clients/${ids.customer}/contacts`,
      'time/worktypes',
      'time/projects',
      `time/projects/${ids.project}`,
      `time/projects/${ids.project}/members`,
      'time/projects/summary',
      'time/tasks',
      'time/timerecords',
      'time/timerecords/summary',
      'time/timerecords/@deleted',
      'time/projects/@deleted',
      'time/impulses',
      'billing/bills',
      `billing/bills/${ids.bill}/items`,
      `billing/bills/${ids.bill}/vats`,
      'billing/bills/summary',
      'billing/pricelists/time',
      'departments',
      'accesses',
      'spendingtime',
      'externalsystems',
      'storage/settings/theme',
      'accounts/@own',
      'accounts/@own/logo/download',
      `users/${ids.me}/signature/download`,
    ]
  }

  interface Answer {
    status: number
    contentType: string | undefined
    body: string
  }

  async function readAll(x: Api, paths: readonly string[]): Promise<Map<string, Answer>> {
    const answers = new Map<string, Answer>()
    for (const route of paths) {
      const answer = await x.get(route)
      answers.set(route, { status: answer.status, contentType: answer.headers['content-type'], body: answer.body.toString('base64') })
    }
    return answers
  }

  /** The command ended well; its progress and errors (stderr) are shown only when it did not. */
  function succeeded(t: Test, result: CliResult, what: string): void {
    t.equal(result.code, 0, what, result.code === 0 ? {} : { stderr: result.stderr, stdout: result.stdout })
  }

  /** The last sequence number of the restore points `history` prints (its last section). */
  function newestReachableSeq(historyText: string): number {
    const reachable = historyText.slice(historyText.indexOf('reachable restore points'))
    const last = [...reachable.matchAll(/seq (\d+)(?:\.\.(\d+))?/g)].at(-1)
    if (last === undefined) throw new Error(`history lists no restore point:\n${historyText}`)
    return Number(last[2] ?? last[1])
  }

  function decodedExport(name: string): TenantExport {
    return decodeExport(fs.readFileSync(exportPath(name)))
  }

  /** The two exports hold the same tenant: every collection record by record, the derived state, the files' bytes. */
  function sameState(t: Test, actual: TenantExport, expected: TenantExport, what: string): void {
    t.equal(actual.tenant, expected.tenant, `${what}: the tenant's name`)
    t.equal(actual.createdAt, expected.createdAt, `${what}: the tenant's creation time`)
    const actualCollections = actual.snapshot.body.collections
    const expectedCollections = expected.snapshot.body.collections
    t.same(Object.keys(actualCollections).sort(), Object.keys(expectedCollections).sort(), `${what}: the same collections`)
    for (const [type, records] of Object.entries(expectedCollections)) {
      t.same(actualCollections[type], records, `${what}: ${type}, ${records.length} records equal one by one`)
    }
    t.same(actual.snapshot.body.derived, expected.snapshot.body.derived, `${what}: the derived state`)
    t.same(
      actual.files.map((file) => file.key),
      expected.files.map((file) => file.key),
      `${what}: the same uploaded files`,
    )
    for (const [index, file] of expected.files.entries()) t.ok(actual.files[index]?.bytes.equals(file.bytes), `${what}: file ${file.key}, byte for byte`)
  }

  t.test('a tenant moves from the embedded mode into the cluster and back, its state unchanged', async (t) => {
    // The embedded server: always the default mode here, whatever TIMELEDGER_TEST_CLUSTER says.
    const embeddedDir = tempDataDir('parity-embedded')
    const embedded = await startService(loadConfig(testEnv(embeddedDir, { RATE_LIMIT_REQUESTS: '0' })))
    let embeddedRunning = true
    const stopEmbedded = async () => {
      if (embeddedRunning) await embedded.stop()
      embeddedRunning = false
    }
    t.teardown(stopEmbedded)
    const embeddedClient = new TestClient(embedded.port, TEST_API_KEY)
    const owner = await embeddedClient.createTenant(TENANT)
    const ids = await seed(api(embeddedClient, TENANT, owner.token))
    const paths = readPaths(ids)
    const embeddedAnswers = await readAll(api(embeddedClient, TENANT, owner.token), paths)
    await stopEmbedded()
    for (const [route, answer] of embeddedAnswers) if (answer.status !== 200) throw new Error(`embedded GET ${route}: ${answer.status} ${Buffer.from(answer.body, 'base64').toString()}`)

    const exported = await runCli(embeddedDir, ['export', TENANT, '--out', exportPath('embedded')])
    succeeded(t, exported, 'export from the data directory')
    t.match(exported.stdout, new RegExp(`${TENANT}: exported seq \\d+, \\d+ objects and 2 files`))

    const cluster = await startCluster({ nodes: 2, leaseMs: LEASE_MS, env: { RATE_LIMIT_REQUESTS: '0' } })
    t.teardown(() => cluster.stop())
    const clusterCli = (args: string[]) => runCli(tempDataDir('parity-operator'), args, { DATABASE_URL: cluster.databaseUrl, CLUSTER_SECRET: TEST_CLUSTER_SECRET, LEASE_MS: String(LEASE_MS) })

    const imported = await clusterCli(['import', '--from', exportPath('embedded')])
    succeeded(t, imported, 'import into the cluster')
    t.match(imported.stdout, new RegExp(`${TENANT}: imported \\d+ objects and 2 files as snapshot seq 1`))

    const clusterApi = api(cluster.client, TENANT, owner.token)
    const clusterAnswers = await readAll(clusterApi, paths)
    for (const route of paths) t.same(clusterAnswers.get(route), embeddedAnswers.get(route), `GET ${route}: the cluster answers as the embedded server did`)
    const known = await cluster.client.request('GET', '/v1/register/checkemail', { query: { apikey: TEST_API_KEY, email: owner.email } })
    t.same(known.json, { exists: true }, 'the cluster’s e-mail index knows the imported owner')

    const fromCluster = await clusterCli(['export', TENANT, '--out', exportPath('cluster')])
    succeeded(t, fromCluster, 'export from the cluster')
    const backDir = tempDataDir('parity-back')
    const back = await runCli(backDir, ['import', '--from', exportPath('cluster')])
    succeeded(t, back, 'import back into a fresh data directory')
    const again = await runCli(backDir, ['export', TENANT, '--out', exportPath('back')])
    succeeded(t, again, 'export from the fresh data directory')

    const original = decodedExport('embedded')
    t.ok(Object.keys(original.snapshot.body.collections).length >= 20, `the tenant holds many kinds of objects (${Object.keys(original.snapshot.body.collections).length})`)
    sameState(t, decodedExport('cluster'), original, 'exported from the cluster')
    sameState(t, decodedExport('back'), original, 'back in the embedded mode')

    // history, cluster and restore --to-seq, once each, against the cluster store: the point restored to is the newest
    // one history lists after a login through the cluster; a project made after it must be gone.
    const importedSeq = decodedExport('cluster').snapshot.header.seq
    const login = await cluster.client.login(TENANT, owner.email, owner.password)
    t.ok(login.length > 0, 'the owner logs in through the cluster with the password set on the embedded server')
    const history = await clusterCli(['history', TENANT])
    succeeded(t, history, 'history')
    t.match(history.stdout, new RegExp(`\\n  seq ${importedSeq} `), 'history lists the imported snapshot')
    const pointSeq = newestReachableSeq(history.stdout)
    t.ok(pointSeq > importedSeq, `history reaches the login's entries (seq ${pointSeq})`)
    const later = await clusterApi.create('time/projects', { name: 'Made in the cluster' })
    t.ok((await clusterApi.ids('time/projects')).includes(later), 'a write through the cluster after that point')
    const report = await clusterCli(['cluster'])
    succeeded(t, report, 'cluster')
    t.match(report.stdout, /nodes \(2\):/, 'cluster lists the two nodes')
    t.match(report.stdout, new RegExp(`\\n  ${TENANT}  on node\\d\\.`), 'cluster shows the node holding the tenant')
    const holderBefore = await leaseRowOf(cluster.databaseUrl, TENANT)
    const restored = await clusterCli(['restore', TENANT, '--to-seq', String(pointSeq)])
    succeeded(t, restored, `restore --to-seq ${pointSeq} while a node holds the tenant`)
    t.match(restored.stdout, /restoring online through the node holding/, 'the restore ran in the node')
    const holderAfter = await leaseRowOf(cluster.databaseUrl, TENANT)
    t.same([holderAfter?.owner, holderAfter?.epoch], [holderBefore?.owner, holderBefore?.epoch], 'the node kept the tenant: no hand-back, no takeover')
    const before = await clusterApi.get('time/projects')
    t.equal(before.status, 401, 'served at once, and, as every restore does, the sessions before it are ended')
    const fresh = await cluster.client.login(TENANT, owner.email, owner.password)
    const listed = await api(cluster.client, TENANT, fresh).get('time/projects')
    t.equal(listed.status, 200, 'a new login reads the restored tenant')
    const projects = (listed.json as { id: string }[]).map((project) => project.id)
    t.notOk(projects.includes(later), 'the project made after the point is gone')
    const embeddedProjects = JSON.parse(Buffer.from(embeddedAnswers.get('time/projects')?.body ?? '', 'base64').toString()) as { id: string }[]
    t.same(projects.sort(), embeddedProjects.map((project) => project.id).sort(), 'the projects are those of the embedded server')
  })
}
