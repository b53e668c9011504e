/**
 * Test helper for IPMI: starts openipmi `ipmi_sim` BMCs on free loopback UDP ports with their
 * own generated configuration (src/lab/ipmi.ts does the work; this module adds a "start N, stop
 * all" helper for tests).
 *
 * Usage:
 * ```ts
 * const sims = ipmiSims();            // in a describe/file scope
 * describeNeeding(IPMI_TOOLS, '…', () => { beforeAll(() => sims.start(2)); afterAll(() => sims.stop()); … });
 * ```
 */
import { startIpmiSim, type IpmiSimBmc, type IpmiSimOptions } from '../../src/lab/ipmi.ts';

export { startIpmiSim, type IpmiSimBmc } from '../../src/lab/ipmi.ts';

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
