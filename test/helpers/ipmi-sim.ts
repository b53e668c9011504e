/**
 * Test helper for IPMI: starts openipmi `ipmi_sim` BMCs on free loopback UDP ports with their
 * own generated configuration (src/lab/ipmi.ts does the work; this module adds what tests need:
 * a skip reason and a "start N, stop all" helper).
 *
 * Usage:
 * ```ts
 * const sims = ipmiSims();            // in a describe/file scope
 * describe.skipIf(IPMI_SKIP !== null)('…', () => { beforeAll(() => sims.start(2)); afterAll(() => sims.stop()); … });
 * ```
 */
import { ipmiSimUnavailable, startIpmiSim, type IpmiSimBmc, type IpmiSimOptions } from '../../src/lab/ipmi.ts';

export { startIpmiSim, type IpmiSimBmc } from '../../src/lab/ipmi.ts';

/** Why IPMI tests must skip here (`ipmi_sim`/`ipmitool` missing), or null. */
export const IPMI_SKIP: string | null = await ipmiSimUnavailable();
if (IPMI_SKIP !== null) console.warn(`IPMI tests skipped: ${IPMI_SKIP}`);

/** A set of simulated BMCs started and stopped together. */
export interface IpmiSims {
  /** The BMCs started so far. */
  readonly bmcs: IpmiSimBmc[];
  /** Starts `n` more BMCs (named `ipmi-<i>`), in parallel. */
  start(n: number, options?: IpmiSimOptions): Promise<IpmiSimBmc[]>;
  /** Stops every BMC and removes its files. */
  stop(): Promise<void>;
}

/** A new, empty {@link IpmiSims}. */
export function ipmiSims(): IpmiSims {
  const bmcs: IpmiSimBmc[] = [];
  return {
    bmcs,
    async start(n, options = {}) {
      const base = bmcs.length;
      const started = await Promise.all(Array.from({ length: n }, (_, i) => startIpmiSim({ name: `ipmi-${base + i}`, ...options })));
      bmcs.push(...started);
      return started;
    },
    async stop() {
      await Promise.all(bmcs.splice(0).map((b) => b.stop()));
    },
  };
}
