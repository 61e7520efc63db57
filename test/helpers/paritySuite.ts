/*
 * The cluster parity suite: the test files that `npm run test:cluster` runs
 * again, unchanged, against a two-node cluster behind HAProxy
 * (TIMELEDGER_TEST_CLUSTER=1: server.ts starts a cluster instead of one
 * service), and the cluster's own fault test. A file joins it by calling
 * `inClusterParitySuite()` once, alone on a line at its top level; that
 * line is the declaration, which scripts/paritySuite.ts finds by reading
 * the files (never running them), so the suite is the list the files
 * declare, as Hono's routers each run one shared suite. The call itself
 * does nothing when the file runs.
 */

/** Declares the calling test file a member of the cluster parity suite (see the top). */
export function inClusterParitySuite(): void {}
