/*
 * `POST|PUT users/{id}/$setEmail?email=…` (or a body {"email": …}; `@self`
 * for the caller): changes the user's e-mail (domain/operations/emailChange.ts)
 * and answers the user as a read after the write shows it. The user's own
 * e-mail changes only with their current password in the body
 * (`{"currentPassword": …}`, passwordProof.ts): a password reset is mailed
 * there.
 */
import { setUserEmail } from '../../domain/operations/emailChange.js'
import { requireSession } from '../requireSession.js'
import { currentPasswordIn, withKnownPassword } from './passwordProof.js'
import { stringParameter } from './actionParameter.js'
import { onObjectOnly } from './actionShape.js'
import { objectAnswer } from './objectAnswer.js'
import type { ResourceAction } from './resourceAction.js'

const setEmail: ResourceAction = {
  async handle(call, decl, rawId) {
    const id = onObjectOnly(call, '$setEmail', rawId, ['POST', 'PUT'])
    const { tenant, principal: caller } = requireSession(call)
    const address = stringParameter(call, '$setEmail', 'email')
    const principal = await withKnownPassword(call, caller, id, currentPasswordIn(call))
    const after = await tenant.write((tx) => setUserEmail(tx, principal, decl, id, address))
    return objectAnswer(call, tenant, decl, after)
  },
}

export const USER_EMAIL_ACTIONS: ReadonlyMap<string, ResourceAction> = new Map([['User:$setEmail', setEmail]])
