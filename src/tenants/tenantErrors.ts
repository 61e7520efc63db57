/*
 * What the tenant layer refuses, as its own error classes with the data
 * their message needs; it knows no HTTP. The HTTP layer turns each into its
 * answer (http/refusalAnswers.ts: 503 TL01-9011 with Retry-After for the
 * ones a retry may cure, 413 TL01-1109 for a file the store can never hold,
 * 409 TL01-1102 for a tenant name that is taken, 401 TL01-1005 for a
 * tenant that moved to another name; in cluster mode a tenant served by
 * another node is forwarded there by the router, else 503 like the
 * others). Each message is the text the answer carries.
 */

/** Base of every refusal of the tenant layer (http/refusalAnswers.ts maps them). */
export abstract class TenantRefusal extends Error {}

/** A log append failed: nothing from that entry on is acknowledged until the tenant has reloaded from disk. */
export class WritesUnavailable extends TenantRefusal {
  override name = 'WritesUnavailable'
  override message = 'the engine cannot accept writes now (the log could not be written); try again'
}

/** The log store holds its ceiling (LMDB_MAP_SIZE_BYTES): writes wait while the tenant reclaims its log (logSpace.ts). */
export class StoreFull extends TenantRefusal {
  override name = 'StoreFull'
  constructor(readonly limitBytes: number) {
    const limitMiB = (limitBytes / 1024 / 1024).toFixed(1)
    super(`the engine cannot accept writes now: the log store is full (LMDB_MAP_SIZE_BYTES, ${limitMiB} MiB); space is being reclaimed, try again`)
  }
}

/** Bytes stored beside a log entry (an upload) that could never fit under the store's ceiling. */
export class FileTooLarge extends TenantRefusal {
  override name = 'FileTooLarge'
  constructor(
    readonly bytes: number,
    readonly limitBytes: number,
  ) {
    super(`a file of ${bytes} bytes cannot be stored: the store holds at most ${limitBytes} bytes (LMDB_MAP_SIZE_BYTES)`)
  }
}

/** A request finds TENANT_MAILBOX_MAX_REQUESTS requests already waiting for the tenant's exclusive job (mailbox.ts). */
export class MailboxFull extends TenantRefusal {
  override name = 'MailboxFull'
  constructor(
    readonly tenant: string,
    readonly maxWaiting: number,
  ) {
    super(`tenant '${tenant}' has ${maxWaiting} requests waiting already (TENANT_MAILBOX_MAX_REQUESTS); try again`)
  }
}

/** A tenant whose snapshot or log could not be recovered: closed until a restore reopens it (tenantRegistry.ts). */
export class TenantClosed extends TenantRefusal {
  override name = 'TenantClosed'
  constructor(
    readonly tenant: string,
    readonly reason: string,
  ) {
    super(`tenant '${tenant}' cannot be opened: ${reason}`)
  }
}

/** An at-once open (TenantRegistry.get) of a tenant whose activation in turns is under way. */
export class TenantLoading extends TenantRefusal {
  override name = 'TenantLoading'
  constructor(readonly tenant: string) {
    super(`tenant '${tenant}' is being loaded; try again shortly`)
  }
}

/** A tenant is created under a name that exists. */
export class TenantNameTaken extends TenantRefusal {
  override name = 'TenantNameTaken'
  constructor(readonly tenant: string) {
    super(`the account address '${tenant}' is taken`)
  }
}

/** A request that waited for a tenant while it was renamed (tenantRename.ts): the tenant is no longer at that address. */
export class TenantRenamed extends TenantRefusal {
  override name = 'TenantRenamed'
  constructor(readonly tenant: string) {
    super(`no account at the address '${tenant}' any more: it was renamed`)
  }
}

/** The registry is closing: no tenant is opened or created any more. */
export class ShuttingDown extends TenantRefusal {
  override name = 'ShuttingDown'
  override message = 'the server is shutting down'
}

/** Cluster mode: another node holds the tenant's lease (the HTTP layer forwards the request to `nodeUrl`). */
export class TenantElsewhere extends TenantRefusal {
  override name = 'TenantElsewhere'
  constructor(
    readonly tenant: string,
    readonly nodeId: string,
    readonly nodeUrl: string,
  ) {
    super(`tenant '${tenant}' is served by node '${nodeId}'; try again`)
  }
}

/** Cluster mode: this node no longer serves the tenant (its lease was lost or given back); a retry finds its owner. */
export class TenantMoved extends TenantRefusal {
  override name = 'TenantMoved'
  constructor(readonly tenant: string) {
    super(`tenant '${tenant}' is moving to another node; try again`)
  }
}

/** Cluster mode: where a tenant lives could not be asked (the database unreachable); a retry may find it. */
export class PlacementUnavailable extends TenantRefusal {
  override name = 'PlacementUnavailable'
  constructor(readonly tenant: string) {
    super(`where tenant '${tenant}' is served cannot be found out now (the cluster store is unreachable); try again`)
  }
}
