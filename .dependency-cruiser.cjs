/*
 * The layers of src/README.md, written as rules the project checks itself
 * (`npm run lint:layers`, part of `npm test`).
 *
 * Each layer may import only the layers below it (type-only imports
 * included: `tsPreCompilationDeps`), and no two modules import each other.
 * A rule here is the table of src/README.md read backwards: for each layer,
 * what it must never import. When the table changes, this file changes
 * with it, in the same commit.
 */

/** The bottom: imported by all, importing nothing of the project above it. */
const BOTTOM = '^src/(assert\\.ts|maybePromise\\.ts|progress\\.ts|json/|observability/)'
/** Everything that wires: nothing but these may import them. */
const WIRING = '^src/(cli\\.ts|commandLine\\.ts|service\\.ts|operatorReports\\.ts)'

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'no two modules import each other, directly or through others',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-outside-src',
      comment: 'the service does not import its tests, benchmarks or scripts',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(test|bench|scripts)/' },
    },
    {
      name: 'bottom-imports-nothing',
      comment: 'the bottom imports nothing of the project but the bottom',
      severity: 'error',
      from: { path: BOTTOM },
      to: { path: '^src/', pathNot: BOTTOM },
    },
    {
      name: 'domain-sees-the-bottom-only',
      comment: 'domain/ sees the tenant state only through domain/tx.ts, which the engine implements',
      severity: 'error',
      from: { path: '^src/domain/' },
      to: { path: '^src/', pathNot: [BOTTOM, '^src/domain/'] },
    },
    {
      name: 'config-sees-credentials-only',
      comment: 'config.ts reads the environment; of the project it needs the password-cost presets alone',
      severity: 'error',
      from: { path: '^src/config\\.ts$' },
      to: { path: '^src/', pathNot: [BOTTOM, '^src/domain/credentials\\.ts$'] },
    },
    {
      name: 'engine-is-the-deterministic-core',
      comment: 'engine/ imports the bottom, config.ts and domain/; never persistence, tenants, HTTP',
      severity: 'error',
      from: { path: '^src/engine/' },
      to: { path: '^src/', pathNot: [BOTTOM, '^src/config\\.ts$', '^src/domain/', '^src/engine/'] },
    },
    {
      name: 'query-below-tenants',
      comment: 'query/ imports the bottom, domain/ and engine/',
      severity: 'error',
      from: { path: '^src/query/' },
      to: { path: '^src/', pathNot: [BOTTOM, '^src/config\\.ts$', '^src/domain/', '^src/engine/', '^src/query/'] },
    },
    {
      name: 'ports-name-stored-types-only',
      comment: 'the ports know the bottom, the engine types of what is stored and the figures every store keeps (snapshot faults, group commits)',
      severity: 'error',
      from: { path: '^src/persist/ports\\.ts$' },
      to: { path: '^src/', pathNot: [BOTTOM, '^src/config\\.ts$', '^src/domain/', '^src/engine/', '^src/persist/(snapshotFaults|groupCommitStats)\\.ts$'] },
    },
    {
      name: 'persistence-below-tenants',
      comment: 'persist/ (embedded and PostgreSQL) implements the ports; never tenants, HTTP or the wiring',
      severity: 'error',
      from: { path: '^src/persist/' },
      to: { path: '^src/(tenants|http|admin|cluster|webhooks|mail|query)/' },
    },
    {
      name: 'embedded-persistence-never-postgres',
      comment: 'the embedded implementation does not know the PostgreSQL one (the reverse is allowed: it shares the codec)',
      severity: 'error',
      from: { path: '^src/persist/', pathNot: '^src/persist/postgres/' },
      to: { path: '^src/persist/postgres/' },
    },
    {
      name: 'mail-sees-its-domain-only',
      comment: 'mail/ is the outbox and its transports',
      severity: 'error',
      from: { path: '^src/mail/' },
      to: { path: '^src/', pathNot: [BOTTOM, '^src/config\\.ts$', '^src/domain/mail\\.ts$', '^src/mail/'] },
    },
    {
      name: 'tenants-reach-persistence-through-ports',
      comment: 'tenants/ joins engine and persistence, through the ports; never HTTP or the wiring above it',
      severity: 'error',
      from: { path: '^src/tenants/' },
      to: { path: ['^src/(http|admin|cluster|webhooks)/', WIRING, '^src/persist/postgres/'] },
    },
    {
      name: 'http-above-tenants-only',
      comment: 'http/ imports everything below except the embedded persistence and PostgreSQL; never the wiring, admin, cluster or webhooks',
      severity: 'error',
      from: { path: '^src/http/' },
      to: { path: ['^src/(admin|cluster|webhooks)/', WIRING, '^src/persist/(?!ports\\.ts$)'] },
    },
    {
      name: 'http-never-sees-the-engine',
      comment: 'http/ reads and writes a tenant through the domain (domain/tx.ts: TenantView, Tx), so what is behind them may change',
      severity: 'error',
      from: { path: '^src/http/' },
      to: { path: '^src/engine/' },
    },
    {
      name: 'admin-below-the-wiring',
      comment: 'admin/ is wiring-level: everything below, never the cluster, webhooks or the commands',
      severity: 'error',
      from: { path: '^src/admin/' },
      to: { path: ['^src/(cluster|webhooks)/', WIRING] },
    },
    {
      name: 'cluster-below-the-wiring',
      comment: 'cluster/ is wiring-level: everything below (PostgreSQL included), never the commands',
      severity: 'error',
      from: { path: '^src/cluster/' },
      to: { path: WIRING },
    },
    {
      name: 'webhooks-below-http',
      comment: 'webhooks/ subscribes to the change feed: tenants, query, domain, engine, config, the bottom',
      severity: 'error',
      from: { path: '^src/webhooks/' },
      to: { path: ['^src/(http|admin|cluster|persist|mail)/', WIRING] },
    },
  ],
  options: {
    includeOnly: '^src/',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
}
