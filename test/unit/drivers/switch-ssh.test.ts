/**
 * The ssh-cli switch driver against SSH servers that answer like NX-OS and EOS CLIs
 * (test/helpers/ssh-switch.ts): the command sets of both vendor profiles, idempotent re-apply,
 * saving, `enable`, host-key pinning, and the failures (bad login, unreachable, refused
 * command) as SwitchErrors naming the cause without secrets.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SwitchError } from '../../../src/domain/networking/ports.ts';
import { SshCliSwitch, sshCliSettings } from '../../../src/drivers/switch/ssh-cli.ts';
import { startSshSwitch, type SshSwitch } from '../../helpers/ssh-switch.ts';

const CHANGES = [
  { port: 'Ethernet1/1', config: { mode: 'access' as const, vlan: 100 } },
  { port: 'Ethernet1/2', config: { mode: 'trunk' as const, native_vlan: 101, allowed_vlans: [200, 201] } },
  { port: 'Ethernet1/3', config: { mode: 'quarantine' as const } },
];

function driver(sw: SshSwitch, vendor: string, extra: Record<string, unknown> = {}): SshCliSwitch {
  return new SshCliSwitch(
    sshCliSettings({ address: '127.0.0.1', port: sw.port, username: 'admin', password: 'switch-pw', vendor, ...extra }),
  );
}

describe('Cisco NX-OS profile', () => {
  // A fresh switch for each test: the tests read its running config and command log.
  let sw: SshSwitch;
  beforeEach(async () => {
    sw = await startSshSwitch({ vendor: 'cisco_nxos', reservedVlan: 4000 });
  });
  afterEach(async () => sw?.close());

  it('configures access, trunk and quarantine ports, saves, and re-applies idempotently', async () => {
    const d = driver(sw, 'cisco_nxos', { host_key_sha256: sw.hostKeySha256 });
    await d.apply(CHANGES);
    const e = (p: string) => sw.running.ifaces.get(p);
    expect(e('Ethernet1/1')).toMatchObject({ l2: true, mode: 'access', access: 100, shutdown: false });
    expect(e('Ethernet1/2')).toMatchObject({ l2: true, mode: 'trunk', native: 101, allowed: [101, 200, 201], shutdown: false });
    expect(e('Ethernet1/3')).toMatchObject({ mode: 'access', access: 1, allowed: [], shutdown: true });
    expect([...sw.running.vlans].sort((a, b) => a - b)).toEqual([1, 100, 101, 200, 201]);
    expect(sw.commands.slice(0, 3)).toEqual(['terminal length 0', 'configure terminal', 'vlan 100']);
    expect(sw.commands).toContain('switchport');
    expect(sw.commands.slice(sw.commands.lastIndexOf('end'))).toContain('copy running-config startup-config');
    expect(sw.startup.ifaces.get('Ethernet1/1')?.access).toBe(100);
    const before = JSON.stringify([...sw.running.ifaces]);
    await d.apply(CHANGES);
    expect(JSON.stringify([...sw.running.ifaces])).toBe(before);
    // Trunk → access drops the trunk role; the port keeps only what the new config says.
    await d.apply([{ port: 'Ethernet1/2', config: { mode: 'access', vlan: 300 } }]);
    expect(e('Ethernet1/2')).toMatchObject({ mode: 'access', access: 300 });
  });

  it('reports refused commands, bad logins, unreachable switches and host-key mismatches', async () => {
    const refused = driver(sw, 'cisco_nxos').apply([{ port: 'Ethernet1/9', config: { mode: 'access', vlan: 4000 } }]);
    await expect(refused).rejects.toThrow(/refused "vlan 4000": % VLAN 4000 is reserved/);
    await expect(refused).rejects.toBeInstanceOf(SwitchError);
    const wrong = driver(sw, 'cisco_nxos', { password: 'nope' }).apply(CHANGES);
    await expect(wrong).rejects.toThrow(/cannot reach switch 127\.0\.0\.1:\d+: All configured authentication methods failed/);
    await expect(wrong).rejects.not.toThrow(/nope/);
    await expect(driver({ ...sw, port: 1 }, 'cisco_nxos').apply(CHANGES)).rejects.toThrow(/ECONNREFUSED/);
    await expect(driver(sw, 'cisco_nxos', { host_key_sha256: '00'.repeat(32) }).apply(CHANGES)).rejects.toThrow(/cannot reach/);
    // The EOS profile does not make NX-OS ports layer 2: the switch refuses, the driver says so.
    await expect(driver(sw, 'arista_eos').apply([{ port: 'Ethernet1/20', config: { mode: 'access', vlan: 5 } }])).rejects.toThrow(
      /layer 3 mode/,
    );
  });
});

describe('Arista EOS profile', () => {
  it('enters enable mode with its secret, configures ports and saves with write memory', async () => {
    const sw = await startSshSwitch({ vendor: 'arista_eos', enableSecret: 'en-secret' });
    try {
      await driver(sw, 'arista_eos', { enable_secret: 'en-secret' }).apply([
        { port: 'Ethernet7', config: { mode: 'trunk', native_vlan: null, allowed_vlans: [10, 20] } },
        { port: 'Ethernet8', config: { mode: 'access', vlan: 10 } },
      ]);
      expect(sw.running.ifaces.get('Ethernet7')).toMatchObject({ mode: 'trunk', native: 1, allowed: [10, 20] });
      expect(sw.running.ifaces.get('Ethernet8')).toMatchObject({ mode: 'access', access: 10 });
      expect(sw.commands).toContain('enable');
      expect(sw.commands).not.toContain('switchport');
      expect(sw.commands).not.toContain('en-secret');
      expect(sw.commands.slice(sw.commands.lastIndexOf('end'))).toContain('write memory');
      expect(sw.startup.ifaces.get('Ethernet8')?.access).toBe(10);
    } finally {
      await sw.close();
    }
  });
});
