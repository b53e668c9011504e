import { describe, expect, it } from 'vitest';
import { agentRamdiskProblem, inBandProblem, missingRamdiskKeys } from '../../../src/domain/deploy/readiness.ts';

const node = (boot: string, driver_info: Record<string, unknown>, deploy = 'direct') => ({
  deploy_interface: deploy,
  boot_interface: boot,
  driver_info,
});

describe('deploy readiness: the driver_info keys a boot interface needs to boot the agent ramdisk', () => {
  it('network boot needs deploy_kernel and deploy_ramdisk (Ironic pxe_utils.parse_driver_info); an ISO is booted from virtual media instead', () => {
    expect(missingRamdiskKeys(node('pxe', {}))).toEqual(['deploy_kernel', 'deploy_ramdisk']);
    expect(missingRamdiskKeys(node('ipxe', { deploy_kernel: 'http://x/k' }))).toEqual(['deploy_ramdisk']);
    expect(missingRamdiskKeys(node('ipxe', { deploy_kernel: 'http://x/k', deploy_ramdisk: ' ' }))).toEqual(['deploy_ramdisk']);
    expect(missingRamdiskKeys(node('pxe', { deploy_kernel: 'k', deploy_ramdisk: 'r' }))).toEqual([]);
    expect(missingRamdiskKeys(node('pxe', { deploy_iso: 'http://x/i.iso' }))).toEqual([]);
  });

  it('virtual media needs deploy_iso (or redfish_deploy_iso), or the kernel and ramdisk pair', () => {
    expect(missingRamdiskKeys(node('redfish-virtual-media', {}))).toEqual(['deploy_iso']);
    expect(missingRamdiskKeys(node('redfish-virtual-media', { redfish_deploy_iso: 'http://x/i.iso' }))).toEqual([]);
    expect(missingRamdiskKeys(node('redfish-virtual-media', { deploy_kernel: 'k', deploy_ramdisk: 'r' }))).toEqual([]);
    expect(missingRamdiskKeys(node('fake', {}))).toEqual(['deploy_kernel', 'deploy_ramdisk']);
  });

  it('names the missing keys in Ironic MissingParameterValue wording, and only direct deploys need the agent in band', () => {
    const reason = agentRamdiskProblem(node('pxe', { deploy_kernel: 'k' }), 'deploy');
    expect(reason).toContain("Missing are: ['deploy_ramdisk']");
    expect(reason).toContain('Cannot validate pxe boot for deploy');
    expect(agentRamdiskProblem(node('redfish-virtual-media', {}), 'inspection')).toContain(
      "Missing are: ['deploy_iso'] (or 'deploy_kernel' and 'deploy_ramdisk')",
    );
    expect(inBandProblem(node('pxe', {}), 'cleaning')).toContain('the cleaning needs the deploy agent ramdisk');
    expect(inBandProblem(node('fake', {}, 'fake'), 'deploy')).toBeNull();
    expect(inBandProblem(node('pxe', { deploy_iso: 'i' }), 'deploy')).toBeNull();
  });
});
