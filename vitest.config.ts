import { defineConfig } from 'vitest/config';

/**
 * Tests within a file run in a shuffled order (files keep theirs), so that no test leans on
 * another's leftovers; the seed is fixed so a failure reproduces, `ESI_TEST_SEED=<n>` tries another.
 * (Set at the root: every project runs with it.)
 */
const sequence = { shuffle: { files: false, tests: true }, seed: Number(process.env.ESI_TEST_SEED ?? 20261126) };

/**
 * The API tests' settings; they run once per database engine (projects api-sqlite, api-pg). The
 * limits are generous: the CLI-driven files (test/api/cli) spawn the esi CLI many times, slow on
 * a loaded 2-core machine. Files share their worker's module graph (`isolate: false`): each file
 * starts its own servers on its own database, and importing esi afresh for each of ~250 files
 * cost about 40 % of the run.
 */
const api = { include: ['test/api/**/*.test.ts'], testTimeout: 90_000, hookTimeout: 90_000, isolate: false };

/**
 * Test projects:
 * - unit: pure domain tests, fast, no I/O beyond temp files;
 * - api-sqlite, api-pg: the HTTP APIs against a real database, SQLite or PostgreSQL
 *   (127.0.0.1:5432/test; each file gets its own schema) — the same files, run together by
 *   `npm run test:api` so that the slow files of both engines overlap;
 * - interop: real third-party clients (openstack CLI, sushy, Ironic) against a real server;
 * - differential: the same request sequences to esi and to the real Ironic 21.4, answers
 *   compared (test/differential/, docs/compatibility.md);
 * - browser: the web dashboard in Debian's chromium (playwright-core) against a real server
 *   (test/browser/);
 * - system: real machines — QEMU/KVM virtual machines booting esi's deploy ramdisk and a real
 *   OS image (test/system/); slow artefacts (ramdisk, OS image) are cached outside the checkout.
 */
export default defineConfig({
  test: {
    sequence,
    projects: [
      { test: { name: 'unit', include: ['test/unit/**/*.test.ts'], testTimeout: 20_000 } },
      { test: { name: 'api-sqlite', ...api, env: { ESI_TEST_DB: 'sqlite' } } },
      { test: { name: 'api-pg', ...api, env: { ESI_TEST_DB: 'postgres' } } },
      {
        test: {
          name: 'interop',
          include: ['test/interop/**/*.test.ts'],
          // Generous: each test drives the real CLI (1–10 s a call on a loaded 2-core machine).
          testTimeout: 600_000,
          hookTimeout: 120_000,
        },
      },
      {
        test: {
          name: 'differential',
          include: ['test/differential/**/*.test.ts'],
          testTimeout: 240_000,
          hookTimeout: 120_000,
        },
      },
      {
        test: {
          name: 'browser',
          include: ['test/browser/**/*.test.ts'],
          testTimeout: 180_000,
          hookTimeout: 120_000,
        },
      },
      {
        test: {
          name: 'system',
          include: ['test/system/**/*.test.ts'],
          testTimeout: 900_000,
          hookTimeout: 900_000,
        },
      },
    ],
  },
});
