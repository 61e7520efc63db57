/*
 * The PostgreSQL client of cluster mode: porsager's `postgres`, which keeps
 * a small pool, pipelines the queries of a transaction on its connection and
 * reconnects by itself after a connection is lost (a restarted or promoted
 * primary). Every bigint the schema holds (sequence numbers, epochs,
 * milliseconds) stays below 2^53, so int8 columns are parsed into numbers
 * instead of the client's default strings. Notices go to `onNotice` (the
 * migrations' "already exists" notices would otherwise reach stdout).
 *
 * A connection the server dropped (a restart, a failover) is found dead only
 * when a query is written to it, and that query fails with CONNECTION_CLOSED;
 * the client connects anew for the next one. Work that may run twice (a
 * read, a fenced deletion, a snapshot written whole) goes through
 * `retryingLostConnection`, which runs it again a few times on such an
 * error. A group commit with directory writes does only when its BEGIN
 * failed (nothing was sent after it); past that, whether its COMMIT
 * happened is unknown, so its appends fail and the tenant reloads. A group
 * of appends only is sent again whole (groupCommit.ts): the log's key
 * refuses its entries a second time should the first COMMIT have happened.
 *
 * The client is patched at install (patches/, by patch-package): a
 * connection that closes fails every query it still holds, also one the
 * pool handed it after its socket failed and before it closed (unpatched,
 * such a query never settles: a lease claim, or a group commit sent right
 * after one that failed, would wait for good), and a write queued on a
 * connection already closed fails its queries instead of throwing from a
 * timer. Two more for the binary COPYs of snapshots (binaryCopy.ts): a COPY
 * TO STDOUT whose last data paused the socket resumes it when it ends
 * (unpatched, the connection's next answers are never read), and a COPY
 * FROM STDIN that fails after its end was sent fails its stream (unpatched,
 * the stream never finishes).
 *
 * A transaction holds its tenants' lease rows FOR SHARE until it ends
 * (fencedTransaction.ts, groupCommit.ts), and a takeover waits for them. A
 * node paused or cut off in the middle of one would hold the takeover back
 * for as long, so the sessions carry idle_in_transaction_session_timeout:
 * PostgreSQL ends such a transaction (its writes never acknowledged) and
 * the takeover goes on.
 *
 * Failover. DATABASE_URL may name several servers (postgres://u@h1:p1,h2:p2/db)
 * with target_session_attrs, as libpq takes them: the client tries them in
 * turn and keeps the connection only to a server of that kind, so a node
 * follows a standby promoted to primary by itself. libpq's `read-write`
 * refuses a server in hot standby; the client (3.4.9) reads only the
 * server's default_transaction_read_only, which a hot standby reports off,
 * and would keep a connection to a standby still in recovery (its writes
 * fail read-only, its LISTEN fails and is never retried: the directory
 * mirror would go deaf). So `read-write`, from the URL or
 * PGTARGETSESSIONATTRS, is given to the client as `primary`, which it checks
 * by the server's in_hot_standby.
 */
import postgres from 'postgres'

/** Connections per node: the group commit holds one, snapshots, reads and leases share the rest. */
const POOL_CONNECTIONS = 6
/** How long a connection attempt may take before the query fails (seconds). */
const CONNECT_TIMEOUT_SECONDS = 10

const INT8_OID = 20

export type Sql = postgres.Sql
export type TxSql = postgres.TransactionSql

/** The longest a transaction may sit idle by default (openSql's `idleInTransactionMs`). */
const IDLE_IN_TRANSACTION_MS = 5_000

/** The target_session_attrs the client is given for `url` (see the top); undefined: the client reads it itself. */
export function targetSessionAttrs(url: string, env: NodeJS.ProcessEnv = process.env): 'primary' | undefined {
  const queryAt = url.indexOf('?')
  const fromUrl = queryAt < 0 ? null : new URLSearchParams(url.slice(queryAt + 1)).get('target_session_attrs')
  return (fromUrl ?? env.PGTARGETSESSIONATTRS) === 'read-write' ? 'primary' : undefined
}

export function openSql(url: string, onNotice: (message: string) => void = () => undefined, idleInTransactionMs = IDLE_IN_TRANSACTION_MS): Sql {
  const targetSession = targetSessionAttrs(url)
  const sql = postgres(url, {
    max: POOL_CONNECTIONS,
    ...(targetSession === undefined ? {} : { target_session_attrs: targetSession }),
    connection: { idle_in_transaction_session_timeout: idleInTransactionMs },
    connect_timeout: CONNECT_TIMEOUT_SECONDS,
    onnotice: (notice) => onNotice(String(notice.message)),
    types: {
      int8: { to: INT8_OID, from: [INT8_OID], serialize: (value: number) => String(value), parse: (text: string) => Number(text) },
    },
  })
  return sql as unknown as Sql
}

/** Attempts of retryingLostConnection in all: every pooled connection may be found lost in turn. */
const LOST_CONNECTION_ATTEMPTS = POOL_CONNECTIONS + 1
const LOST_CONNECTION_CODES = new Set(['CONNECTION_CLOSED', 'CONNECTION_DESTROYED'])

/** Whether `error` is the client's for a connection found lost. */
export function isLostConnection(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' && LOST_CONNECTION_CODES.has(code)
}

/** `work`, run again when it failed because its connection was found lost (see the top), while `mayRetry()` says it may. */
export async function retryingLostConnection<T>(work: () => Promise<T>, mayRetry: () => boolean = () => true): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await work()
    } catch (error) {
      if (attempt >= LOST_CONNECTION_ATTEMPTS || !isLostConnection(error) || !mayRetry()) throw error
    }
  }
}
