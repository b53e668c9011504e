/**
 * Layering as code (docs/architecture.md "One folder, one job"): which folder of src/ may import
 * which, and no import cycles between files. Run by `npm run deps`, part of `npm test`.
 * @type {import('dependency-cruiser').IConfiguration}
 */
module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      comment: 'A file may not depend on itself through others: split the shared part out.',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'domain-is-pure',
      comment: 'Domain logic holds no HTTP, no SQL, no drivers: it declares the ports the others implement.',
      severity: 'error',
      from: { path: '^src/domain/' },
      to: { path: '^src/(api|store|conductor|drivers|lab|cli|server|agent)/' },
    },
    {
      name: 'domain-does-no-io',
      comment: 'Domain logic reads no files and opens no sockets or processes: the process that runs it does (server/, drivers/, store/).',
      severity: 'error',
      from: { path: '^src/domain/' },
      to: {
        dependencyTypes: ['core'],
        path: '^(node:)?(fs|fs/promises|net|http|https|http2|dgram|child_process|worker_threads|cluster|os)$',
      },
    },
    {
      name: 'below-the-api',
      comment: 'store, drivers and conductor implement or drive the domain; they know nothing of the APIs or of process assembly.',
      severity: 'error',
      from: { path: '^src/(store|drivers|conductor)/' },
      to: { path: '^src/(api|server|cli)/' },
    },
    {
      name: 'api-is-wire-only',
      comment: 'An API plugin parses, calls the domain and renders: no storage, no drivers, no process assembly.',
      severity: 'error',
      from: { path: '^src/api/' },
      to: { path: '^src/(store|drivers|server|conductor|cli|lab)/' },
    },
    {
      name: 'metrics-library-in-server-only',
      comment:
        'Only the process assembly knows prom-client: the domain, conductor, drivers and store report through observer ports that src/server/metrics-events.ts implements.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/server/' },
      to: { path: 'node_modules/prom-client/' },
    },
    {
      name: 'agent-and-cli-are-clients',
      comment: 'The deploy agent and the CLI talk to esi over HTTP like any client.',
      severity: 'error',
      from: { path: '^src/(agent|cli)/' },
      to: { path: '^src/(api|store|conductor|server)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '^(node_modules|test|bench)/' },
  },
};
