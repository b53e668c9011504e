/**
 * The benchmarks' deterministic pseudo-random numbers: seeded, so that every run builds the same
 * fleet, history or trace.
 */

/**
 * A PRNG (mulberry32, a 32-bit state generator) from `seed`.
 * @returns a function giving numbers in [0, 1), the same sequence for the same seed
 */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
