import { defineConfig } from 'vitest/config';

/** The API tests' settings; they run once per database engine (projects api-sqlite, api-pg). */
const api = { include: ['test/api/**/*.test.ts'], testTimeout: 30_000, hookTimeout: 60_000 };

/**
 * Test projects:
 * - unit: pure domain tests, fast, no I/O beyond temp files;
 * - api-sqlite, api-pg: the HTTP APIs against a real database, SQLite or PostgreSQL
 *   (127.0.0.1:5432/test; each file gets its own schema) — the same files, run together by
 *   `npm run test:api` so that the slow files of both engines overlap;
 * - interop: real third-party clients (openstack CLI, sushy, Ironic) against a real server.
 */
export default defineConfig({
  test: {
    projects: [
      { test: { name: 'unit', include: ['test/unit/**/*.test.ts'], testTimeout: 20_000 } },
      { test: { name: 'api-sqlite', ...api, env: { ESI_TEST_DB: 'sqlite' } } },
      { test: { name: 'api-pg', ...api, env: { ESI_TEST_DB: 'postgres' } } },
      {
        test: {
          name: 'interop',
          include: ['test/interop/**/*.test.ts'],
          testTimeout: 300_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
