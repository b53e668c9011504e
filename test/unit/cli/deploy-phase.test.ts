/**
 * The deploy phases `esi node provision --wait` shows (src/cli/commands/node-provision.ts
 * deployPhase): a node is `booting the deploy agent` only before its first deploy step, so that
 * a phase that ended is never shown again after a later one (the core `deploy` step once the
 * agent called back, an operator's step).
 */
import { describe, expect, it } from 'vitest';
import { deployPhase } from '../../../src/cli/commands/node-provision.ts';

describe('deploy phases', () => {
  it('names each phase of an agent deploy in the order they happen', () => {
    const seen = [
      { provision_state: 'deploying', deploy_step: {} },
      { provision_state: 'wait call-back', deploy_step: { interface: 'deploy', step: 'deploy' } },
      { provision_state: 'deploying', deploy_step: { interface: 'deploy', step: 'deploy' } },
      { provision_state: 'wait call-back', deploy_step: { interface: 'deploy', step: 'write_image', progress: { bytes: 5, total: 10 } } },
      { provision_state: 'deploying', deploy_step: { interface: 'deploy', step: 'prepare_instance_boot' } },
    ].map((n) => deployPhase(n).phase);
    expect(seen).toEqual([
      'booting the deploy agent',
      'waiting for the deploy agent to call back',
      'deploying',
      'writing the image',
      'booting the instance',
    ]);
  });

  it('names an operator deploy step rather than calling it the agent boot', () => {
    expect(deployPhase({ provision_state: 'deploying', deploy_step: { interface: 'bios', step: 'apply_configuration' } }).phase).toBe(
      'deploy step bios.apply_configuration',
    );
    expect(deployPhase({ provision_state: 'deploying', deploy_step: null }).phase).toBe('booting the deploy agent');
  });
});
