/**
 * Small helpers of the benchmarks that start processes and databases on this machine.
 */
import net from 'node:net';
import pg from 'pg';

/** A TCP port nothing listens on now, from the kernel (port 0), on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/** Run `sql` on the PostgreSQL server of `url`, connected to `url`'s own database (e.g. `create database …`). */
export async function adminSql(url: string, sql: string): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}
