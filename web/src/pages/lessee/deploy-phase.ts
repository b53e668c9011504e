/**
 * Where a deploying, capturing or cleaning node is, as a phase (the CLI's reading,
 * src/domain/deploy/phases.ts) and a fraction for the progress bar.
 */

import { capturePhase, cleanPhase, deployPhase } from '../../../../src/domain/deploy/phases.ts';

export { capturePhase, cleanPhase, deployPhase };

type Node = Record<string, any>;

/** Provision states of a capture (Ironic's servicing) in progress. */
export const CAPTURING = new Set(['servicing', 'service wait']);

/** Provision states of a deploy in progress. */
export const DEPLOYING = new Set(['deploying', 'wait call-back', 'deploy wait']);
/** Provision states of a teardown or cleaning in progress. */
export const CLEANING = new Set(['deleting', 'cleaning', 'clean wait']);

/**
 * A fraction 0…1 of the whole flow for the bar: the image write is most of a deploy (10 % → 90 %
 * by bytes), the phases before and after it fixed points; null when it cannot be told.
 */
export function fraction(n: Node): number | null {
  if (n.provision_state === 'active' || n.provision_state === 'available') return 1;
  if (DEPLOYING.has(n.provision_state)) {
    const p = deployPhase(n);
    if (p.bytes !== undefined && p.total) return 0.1 + 0.8 * Math.min(1, p.bytes / p.total);
    if (p.phase.startsWith('converting')) return 0.1;
    if (p.phase === 'booting the instance' || p.phase === 'deploying') return 0.92;
    return 0.05;
  }
  if (CAPTURING.has(n.provision_state)) {
    const p = capturePhase(n);
    if (p.bytes !== undefined && p.total) return 0.2 + 0.75 * Math.min(1, p.bytes / p.total);
    return p.phase.startsWith('converting') ? 0.15 : 0.05;
  }
  if (CLEANING.has(n.provision_state)) {
    const p = cleanPhase(n);
    if (p.bytes !== undefined && p.total) return 0.1 + 0.85 * Math.min(1, p.bytes / p.total);
    return n.provision_state === 'deleting' ? 0.05 : null;
  }
  return null;
}
