/*
 * A second (third, …) user of a tenant for permission tests: created over
 * HTTP by the owner, then logged in. Users created by a superuser are meant
 * to be confirmed on creation; until every tree has that, an unconfirmed
 * user is confirmed here through the tenant's own write path (a logged
 * change, exactly what the confirmation call would do).
 */
import { changeRecord } from '../../src/domain/recordMaking.js'
import { User } from '../../src/domain/resources/user.js'
import { loginRaw } from './identity.js'
import type { InProcessServer } from './server.js'

export interface TestUser {
  id: string
  email: string
  token: string
}

async function confirmDirectly(server: InProcessServer, tenant: string, userId: string): Promise<void> {
  const actor = server.service.services.registry.get(tenant)
  if (actor === undefined) throw new Error(`no tenant ${tenant}`)
  await actor.write((tx) => {
    const user = tx.state.get('User', userId)
    if (user === undefined) throw new Error(`no user ${userId}`)
    if (user.confirmed !== true) changeRecord(tx, User, user, { confirmed: true })
  })
}

export async function addUser(server: InProcessServer, tenant: string, ownerToken: string, name: string, extra: Record<string, unknown> = {}): Promise<TestUser> {
  const { client } = server
  const email = `${name.toLowerCase()}@${tenant}.test`
  const password = 'user-password'
  const created = await client.request('POST', '/v1/users', {
    tenant,
    query: { token: ownerToken },
    body: { firstName: name, lastName: 'Tester', email, password, confirmed: true, ...extra },
  })
  if (created.status !== 201) throw new Error(`user create failed: ${created.status} ${created.text}`)
  const id = created.json.id as string
  let login = await loginRaw(client, tenant, email, password)
  if (login.status === 401 && login.json?.code === 'TL01-1007') {
    await confirmDirectly(server, tenant, id)
    login = await loginRaw(client, tenant, email, password)
  }
  if (login.status !== 200) throw new Error(`login of ${email} failed: ${login.status} ${login.text}`)
  return { id, email, token: login.json.token as string }
}
