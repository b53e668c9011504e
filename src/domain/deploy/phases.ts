/**
 * Where a node's deploy, cleaning or capture is, in words, read from the node as Ironic's API
 * shows it (`provision_state`, and `deploy_step` / `clean_step` with esi's agent's reported
 * `progress: {phase, bytes, total}`, docs/provisioning.md). One reading for every client that
 * shows progress: the CLI's `--wait` bars (src/cli/commands/node-provision.ts, node-capture.ts)
 * and the dashboard's progress bar (web/src/pages/lessee/).
 */

/** A phase to show, and the bytes moved in it when it moves bytes (`total` when known). */
export interface Phase {
  readonly phase: string;
  readonly bytes?: number;
  readonly total?: number | null;
}

/** A node as the baremetal API answers it (only the fields read here matter). */
type NodeJson = Record<string, any>;

/**
 * Where a deploying node is. Only a node with no deploy step yet is `booting the deploy agent`:
 * a later step — the core `deploy` step once the agent called back, or an operator's step — is
 * named as what it is, so that no phase that ended is shown again.
 */
export function deployPhase(n: NodeJson): Phase {
  const step: unknown = n.deploy_step?.step;
  // The image write runs while the node waits (`wait call-back` with deploy_step write_image).
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

/** Where a node being torn down or cleaned is. */
export function cleanPhase(n: NodeJson): Phase {
  if (n.provision_state === 'deleting') return { phase: 'tearing down the instance' };
  const step = n.clean_step?.step;
  // A long clean step runs while the node waits (`clean wait` with its clean_step).
  if (n.provision_state === 'clean wait' && typeof step !== 'string') return { phase: 'cleaning: waiting for the deploy agent' };
  if (typeof step === 'string') {
    const p = n.clean_step.progress;
    return typeof p?.bytes === 'number'
      ? { phase: `cleaning: ${step}`, bytes: p.bytes, total: p.total ?? null }
      : { phase: `cleaning: ${step}` };
  }
  return { phase: n.provision_state === 'cleaning' ? 'cleaning: booting the deploy agent' : n.provision_state };
}

/** Where a node capturing its disk into an image (Ironic's servicing) is. */
export function capturePhase(n: NodeJson): Phase {
  if (n.provision_state === 'service wait') return { phase: 'waiting for the deploy agent' };
  const p = n.deploy_step?.step === 'capture_image' ? n.deploy_step.progress : undefined;
  if (p?.phase === 'convert') return { phase: 'converting the disk to qcow2' };
  if (p?.phase === 'upload') return { phase: 'uploading the image', bytes: p.bytes, total: p.total ?? null };
  if (n.provision_state === 'servicing') return { phase: 'booting the deploy agent' };
  return { phase: 'booting the instance again' };
}
