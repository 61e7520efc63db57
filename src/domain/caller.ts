/*
 * Who asks for an operation, as the domain sees them: a user id and whether
 * the user may do everything in the tenant (the account owner or an admin).
 * The HTTP layer's Principal (http/call.ts) is such a caller; internal writes
 * have none (null where a caller is optional).
 */
export interface Caller {
  readonly userId: string
  readonly superuser: boolean
}
