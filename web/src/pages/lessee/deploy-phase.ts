/**
 * Where a deploying or cleaning node is, as a phase and a fraction for the progress bar — the
 * same reading of Ironic's `deploy_step` / `clean_step` (with esi's agent's reported
 * `progress: {phase, bytes, total}`) as `esi node provision --wait` (src/cli/commands/node-provision.ts).
 */

/** A phase to show, and the image bytes written when known. */
export interface Phase {
  readonly phase: string;
  readonly bytes?: number;
  readonly total?: number | null;
}

type Node = Record<string, any>;

/** The phase of a node being deployed. */
export function deployPhase(n: Node): Phase {
  const step: unknown = n.deploy_step?.step;
  if (n.provision_state === 'wait call-back' && step !== 'write_image') return { phase: 'waiting for the deploy agent to call back' };
  if (step === 'write_image') {
    const p = n.deploy_step.progress;
    if (p?.phase === 'convert') return { phase: 'converting the image (qcow2 to raw)' };
    return { phase: 'writing the image', bytes: typeof p?.bytes === 'number' ? p.bytes : 0, total: p?.total ?? null };
  }
  if (step === 'prepare_instance_boot') return { phase: 'booting the instance' };
  if (step === 'deploy') return { phase: 'deploying' };
  if (typeof step === 'string' && step !== '') return { phase: `deploy step ${n.deploy_step.interface ?? 'deploy'}.${step}` };
  return { phase: 'booting the deploy agent' };
}

/** The phase of a node being torn down or cleaned. */
export function cleanPhase(n: Node): Phase {
  if (n.provision_state === 'deleting') return { phase: 'tearing down the instance' };
  const step = n.clean_step?.step;
  if (n.provision_state === 'clean wait' && typeof step !== 'string') return { phase: 'cleaning: waiting for the deploy agent' };
  if (typeof step === 'string') {
    const p = n.clean_step.progress;
    return typeof p?.bytes === 'number'
      ? { phase: `cleaning: ${step}`, bytes: p.bytes, total: p.total ?? null }
      : { phase: `cleaning: ${step}` };
  }
  return { phase: n.provision_state === 'cleaning' ? 'cleaning: booting the deploy agent' : n.provision_state };
}

/** The phase of a node capturing its disk into an image (`esi node capture`'s reading). */
export function capturePhase(n: Node): Phase {
  if (n.provision_state === 'service wait') return { phase: 'waiting for the deploy agent' };
  const p = n.deploy_step?.step === 'capture_image' ? n.deploy_step.progress : undefined;
  if (p?.phase === 'convert') return { phase: 'converting the disk to qcow2' };
  if (p?.phase === 'upload') return { phase: 'uploading the image', bytes: p.bytes, total: p.total ?? null };
  if (n.provision_state === 'servicing') return { phase: 'booting the deploy agent' };
  return { phase: 'booting the instance again' };
}

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
