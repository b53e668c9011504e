import { defineConfig } from 'vitest/config';

/**
 * Three test projects:
 * - unit: pure domain tests, fast, no I/O beyond temp files;
 * - api: the HTTP APIs against a real database, SQLite or PostgreSQL (ESI_TEST_DB);
 * - interop: real third-party clients (openstack CLI, sushy) against a real server.
 */
export default defineConfig({
  test: {
    projects: [
      { test: { name: 'unit', include: ['test/unit/**/*.test.ts'], testTimeout: 20_000 } },
      {
        test: {
          name: 'api',
          include: ['test/api/**/*.test.ts'],
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
      {
        test: {
          name: 'interop',
          include: ['test/interop/**/*.test.ts'],
          testTimeout: 300_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
