import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/**
 * Test files that start and stop whole processes or need the SQLite file layout (CLI, install,
 * serve, processes, connection loss, migrate, dev, the README guide, the outbox processes): run once, by
 * `npm test`, not again per store.
 */
const SQLITE_ONLY = [
  'cli',
  'install',
  'serve',
  'processes',
  'connectionLoss',
  'migrate',
  'dev',
  'readmeGuide',
  'outbox',
  'realtimeInstances',
  // The browser walks the same routes as oidc.test.ts, which runs on every store.
  'oidcBrowser',
  // The console uses only the public API, whose behaviour on every store the other suites hold.
  'adminConsole',
  'adminSignIn',
  // Takes its own SQLite file and PostgreSQL schema and runs the CLI: once is enough.
  'backup',
  'transfer',
  // The MCP conformance suite runs against the server once; mcp.test.ts covers the stores.
  'mcpConformance',
  // npm test's own script, stopped: it starts a vitest of its own.
  'testScript',
].map((name) => `test/integration/${name}.test.ts`);

/** Test files that serve no HTTP. */
const NO_HTTP = [
  'test/integration/cli.test.ts',
  'test/integration/repository.test.ts',
  'test/integration/testScript.test.ts',
  'test/conformance/**',
  'test/golden/**',
];

/**
 * What the run on the node:http adapter (HTTP_ADAPTER=node) leaves out: the files that serve no
 * HTTP, and the SQLite-only ones (processes, the CLI, browsers), whose servers answer through the
 * same lane and Express app the rest of that run already walks.
 */
const NOT_ON_NODE_ADAPTER = [...NO_HTTP, ...SQLITE_ONLY];

/** The CLI and servers the integration tests start run from dist/: compiled once per run. */
const BUILD_DIST = ['test/support/globalSetup.ts'];

// One configuration, four projects; the npm scripts pick them:
//   npm test                -> unit, then integration (SQLite), in two runs: the unit workers do not
//                              wait on a main process busy with the integration suite
//   npm run test:unit       -> unit: beside the code + architecture, from the sources, no build
//   npm run test:postgres   -> stores with TEST_STORE=postgres (+ the PostgreSQL conformance suite)
//   npm run test:mongo-fake -> stores with TEST_STORE=mongo-fake
//   npm run test:package    -> package: npm pack and a git clone installed without dev dependencies
//   npm run test:cluster    -> cluster: several instances on PostgreSQL + Redis, with faults
export default defineConfig({
  resolve: {
    alias: { 'entigen/runtime': fileURLToPath(new URL('./runtime/index.ts', import.meta.url)) },
  },
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // The integration files wait on servers, databases and browsers far more than they compute:
    // two at a time keep a two-core machine busy (vitest's default there is one).
    maxWorkers: Math.max(2, availableParallelism() - 1),
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['{bin,generator,runtime}/**/*.test.ts', 'test/architecture/**/*.test.ts'],
          testTimeout: 30_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts'],
          exclude: [
            '**/node_modules/**',
            'test/architecture/**',
            'test/package/**',
            'test/cluster/**',
            'test/conformance/postgres.test.ts',
            ...(process.env.HTTP_ADAPTER ? NOT_ON_NODE_ADAPTER : []),
          ],
          globalSetup: BUILD_DIST,
        },
      },
      {
        extends: true,
        test: {
          name: 'stores',
          include: [
            'test/integration/**/*.test.ts',
            ...(process.env.TEST_STORE === 'postgres' ? ['test/conformance/postgres.test.ts'] : []),
          ],
          exclude: ['**/node_modules/**', ...SQLITE_ONLY],
          globalSetup: BUILD_DIST,
        },
      },
      {
        extends: true,
        test: { name: 'package', include: ['test/package/**/*.test.ts'], globalSetup: BUILD_DIST },
      },
      {
        // Several real instances on PostgreSQL + Redis, with faults; npm run test:cluster runs one
        // file at a time, since each starts its own processes and times what crosses between them.
        extends: true,
        test: {
          name: 'cluster',
          include: ['test/cluster/**/*.test.ts'],
          globalSetup: BUILD_DIST,
          testTimeout: 120_000,
        },
      },
    ],
  },
});
