import { describe, expect, it } from 'vitest';
import {
  agentIsoOf,
  agentRamdiskProblem,
  inBandProblem,
  invalidRamdiskKeys,
  isHttpUrl,
  missingRamdiskKeys,
} from '../../../src/domain/deploy/readiness.ts';

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

  it('virtual media boots only an http(s) ISO: file://, a path or an image id is refused naming the key and what to use instead', () => {
    for (const iso of ['file:///tmp/x.iso', '/tmp/x.iso', '6b1b4b7c-8d0e-4e2b-9a63-0c0f1b8e8a11', 'ftp://x/i.iso', 'http://']) {
      const n = node('redfish-virtual-media', { deploy_iso: iso, deploy_kernel: 'http://x/k', deploy_ramdisk: 'http://x/r' });
      expect(missingRamdiskKeys(n), iso).toEqual([]);
      expect(invalidRamdiskKeys(n), iso).toEqual(['deploy_iso']);
      const reason = agentRamdiskProblem(n, 'inspection');
      expect(reason, iso).toContain('Cannot validate redfish-virtual-media boot for inspection: invalid deploy agent ramdisk');
      expect(reason).toContain(`'deploy_iso' ${JSON.stringify(iso)} cannot be booted from: use an http(s) URL of the ISO`);
      expect(reason).toContain("or remove 'deploy_iso' and set 'deploy_kernel' and 'deploy_ramdisk'");
      expect(inBandProblem(n, 'deploy')).toContain('boot for deploy');
    }
    const deprecated = node('redfish-virtual-media', { redfish_deploy_iso: 'file:///srv/a.iso', deploy_iso: 'http://x/i.iso' });
    expect(invalidRamdiskKeys(deprecated)).toEqual(['redfish_deploy_iso']);
    expect(agentRamdiskProblem(node('redfish-virtual-media', { deploy_iso: 'https://x/i.iso' }), 'deploy')).toBeNull();
    expect(agentRamdiskProblem(node('redfish-virtual-media', { deploy_iso: 'x'.repeat(1000) }), 'deploy')!.length).toBeLessThan(700);
  });

  it('deploy_kernel and deploy_ramdisk must be http(s) or file:// URLs for every boot interface, when they are what boots', () => {
    for (const boot of ['pxe', 'ipxe', 'redfish-virtual-media', 'fake']) {
      expect(
        agentRamdiskProblem(node(boot, { deploy_kernel: 'http://x/k', deploy_ramdisk: 'file:///var/lib/esi/r' }), 'deploy'),
        boot,
      ).toBeNull();
      expect(agentRamdiskProblem(node(boot, { deploy_kernel: 'file://localhost/k', deploy_ramdisk: 'https://x/r' }), 'deploy')).toBeNull();
      const bad = node(boot, { deploy_kernel: '/boot/vmlinuz', deploy_ramdisk: 'glance-image-id' });
      expect(invalidRamdiskKeys(bad), boot).toEqual(['deploy_kernel', 'deploy_ramdisk']);
      const reason = agentRamdiskProblem(bad, 'cleaning')!;
      expect(reason).toContain(`Cannot validate ${boot} boot for cleaning`);
      expect(reason).toContain(
        `'deploy_kernel' "/boot/vmlinuz" cannot be booted from: use an http(s) URL, or a file:// URL of a file in ESI_FILE_URL_ALLOWED_PATHS`,
      );
      expect(reason).toContain(`'deploy_ramdisk' "glance-image-id" cannot be booted from`);
    }
    expect(invalidRamdiskKeys(node('pxe', { deploy_kernel: 'file://otherhost/k', deploy_ramdisk: 'file:///' }))).toEqual([
      'deploy_kernel',
      'deploy_ramdisk',
    ]);
    // An ISO takes the pair's place: the pair is not what boots, so it is not judged.
    expect(
      agentRamdiskProblem(
        node('redfish-virtual-media', { deploy_iso: 'http://x/i.iso', deploy_kernel: 'k', deploy_ramdisk: 'r' }),
        'deploy',
      ),
    ).toBeNull();
    expect(invalidRamdiskKeys(node('pxe', { deploy_iso: 'i', deploy_kernel: 'k', deploy_ramdisk: 'r' }))).toEqual([]);
    // Missing keys are named first, as before.
    expect(agentRamdiskProblem(node('pxe', { deploy_kernel: 'k' }), 'deploy')).toContain("Missing are: ['deploy_ramdisk']");
  });

  it('reads the ISO as the conductor does (redfish_deploy_iso first) and knows an http(s) URL', () => {
    expect(agentIsoOf({ deploy_iso: 'a', redfish_deploy_iso: 'b' })).toEqual({ key: 'redfish_deploy_iso', value: 'b' });
    expect(agentIsoOf({ deploy_iso: 'a', redfish_deploy_iso: ' ' })).toEqual({ key: 'deploy_iso', value: 'a' });
    expect(agentIsoOf({ deploy_iso: 3 })).toBeNull();
    expect(isHttpUrl('HTTP://x/i.iso')).toBe(true);
    expect(isHttpUrl('https://[::1]:8080/i.iso')).toBe(true);
    expect(isHttpUrl('file:///x')).toBe(false);
    expect(isHttpUrl(undefined)).toBe(false);
  });
});
