/**
 * System test of the lab's QEMU-backed nodes (src/lab/qemu/, docs/lab.md): real virtual machines
 * behind the lab's Redfish BMC, driven over real HTTP, booting the small GRUB images of
 * ./qemu-lab-support.ts — from virtual media and from the disk in UEFI and Legacy mode, from the
 * network with iPXE — and powering off or rebooting on their own.
 *
 * One lab with one QEMU node per test (each test owns its node and powers it off at its end); the
 * nodes' NICs are on the lab's bridge in a namespace, so the suite needs root and namespaces.
 */
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { WebSocket } from 'undici';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { LinuxBridgeSwitch, linuxBridgeSettings } from '../../src/drivers/switch/linux-bridge.ts';
import { serialConsoleUri } from '../../src/lab/index.ts';
import { describeNeeding } from '../helpers/tools.ts';
import { waitUntilTrue } from '../helpers/wait-for.ts';
import {
  alive,
  AUTH,
  BOOT_MS,
  plain,
  QEMU_LAB_MACHINE_REASON,
  QEMU_LAB_NEEDS,
  startQemuTestLab,
  VLAN,
  type QemuTestLab,
} from './qemu-lab-support.ts';

describeNeeding(
  QEMU_LAB_NEEDS,
  'QEMU lab nodes: boots and power',
  () => {
    let t: QemuTestLab;
    beforeAll(async () => {
      t = await startQemuTestLab({ count: 6, prefix: `qt${process.pid % 10_000}`, address: `10.42.${200 + (process.pid % 50)}.1/24` });
    });
    afterAll(async () => {
      await t?.close();
    });

    it('UEFI: boots the inserted ISO once, then a reset with override Hdd boots the disk; ForceOff ends QEMU', async () => {
      const id = 'node-0';
      try {
        t.writeDisk(id, 'hdd.iso');
        await t.insert(id, 'cd.iso');
        await t.boot(id, 'Cd', 'UEFI');
        await t.reset(id, 'On');
        expect(await t.powerState(id)).toBe('On');
        await t.waitConsole(id, 'ESI-CD-efi');
        // (With accel auto, a KVM that cannot run OVMF has been replaced by TCG by now.)
        const pid = t.lab.qemu!.node(id).pid!;
        expect(fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8')).toContain('OVMF_CODE_4M.fd');
        // The BMC's serial console websocket: the scrollback, then what the VM prints; what is typed goes to the VM.
        const ws = new WebSocket(`${t.lab.url.replace(/^http/, 'ws')}${serialConsoleUri(id)}`, { headers: { authorization: AUTH } });
        const received: Buffer[] = [];
        ws.binaryType = 'arraybuffer';
        ws.onmessage = (m) => received.push(Buffer.from(m.data as ArrayBuffer));
        const seen = () => plain(Buffer.concat(received).toString('latin1'));
        await waitUntilTrue(() => seen().includes('ESI-CD-efi'), { what: 'the websocket scrollback' });
        // Typed as a person types: an emulated UART without flow control drops a burst.
        for (const ch of 'esi42\r') {
          ws.send(Buffer.from(ch));
          await new Promise((r) => setTimeout(r, 200));
        }
        await waitUntilTrue(() => seen().includes('ESI-ANSWER-esi42'), { timeoutMs: 60_000, what: "the VM's answer on the websocket" });
        ws.close();
        const after = (await t.redfish('GET', t.sys(id))).body;
        expect(after.Boot).toMatchObject({
          BootSourceOverrideTarget: 'Cd',
          BootSourceOverrideEnabled: 'Disabled',
          BootSourceOverrideMode: 'UEFI',
        });
        expect((await t.redfish('GET', t.cd(id))).body).toMatchObject({ Inserted: true, Image: `${t.base}/cd.iso` });

        await t.boot(id, 'Hdd');
        await t.reset(id, 'ForceRestart');
        await t.waitConsole(id, 'ESI-HDD-efi');
        // QMP qom-set of the bootindexes and system_reset: the same QEMU process.
        expect(t.lab.qemu!.node(id).pid).toBe(pid);
        expect(t.lab.systems.get(id)).toMatchObject({ powerState: 'On', bootCount: 2, lastBootOverride: 'Hdd' });

        // The console log has it all.
        const log = plain(fs.readFileSync(path.join(t.dir, 'data/lab', id, 'console.log'), 'latin1'));
        for (const m of ['ESI-CD-efi', 'ESI-ANSWER-esi42', 'ESI-HDD-efi']) expect(log).toContain(m);

        const current = t.lab.qemu!.node(id).pid!;
        await t.reset(id, 'ForceOff');
        expect(await t.powerState(id)).toBe('Off');
        expect(alive(current)).toBe(false);
        expect(t.lab.qemu!.node(id).pid).toBeNull();
      } finally {
        await t.off(id);
      }
    });

    it('Legacy: SeaBIOS boots the ISO once, then the disk after a reset with override Hdd', async () => {
      const id = 'node-1';
      try {
        t.writeDisk(id, 'hdd.iso');
        await t.insert(id, 'cd.iso');
        await t.boot(id, 'Cd', 'Legacy');
        await t.reset(id, 'On');
        const first = t.lab.qemu!.node(id).pid!;
        expect(fs.readFileSync(`/proc/${first}/cmdline`, 'utf8')).not.toContain('pflash');
        await t.waitConsole(id, 'ESI-CD-pc');
        expect(t.consoleText(id)).toContain('SeaBIOS');
        await t.boot(id, 'Hdd');
        await t.reset(id, 'ForceRestart');
        await t.waitConsole(id, 'ESI-HDD-pc');
        expect(t.lab.systems.get(id)).toMatchObject({ powerState: 'On', bootCount: 2, lastBootOverride: 'Hdd' });
      } finally {
        await t.off(id);
      }
    });

    it('Pxe: iPXE starts on the NIC; once the linux-bridge driver puts its port in the provisioning VLAN the host sees its frames', async () => {
      const id = 'node-2';
      const mac = t.lab.systems.get(id).mac;
      const net = t.lab.qemu!.network!;
      const port = net.ports.get(id)!;
      try {
        // Quarantined: the port is down (and in no VLAN).
        const link = JSON.parse(execFileSync('ip', ['-n', net.netns, '-j', 'link', 'show', 'dev', port], { encoding: 'utf8' }))[0];
        expect(link.flags).not.toContain('UP');
        const driver = new LinuxBridgeSwitch(linuxBridgeSettings({ bridge: net.bridge, netns: net.netns }));
        await driver.apply([{ port, config: { mode: 'access', vlan: VLAN } }]);
        // A raw socket on the host's end of the uplink waits for a frame from the node's MAC.
        const sniff = new Promise<{ code: number; out: string }>((resolve) => {
          const py = `import socket,sys\ns=socket.socket(socket.AF_PACKET,socket.SOCK_RAW,socket.htons(3))\ns.bind((sys.argv[1],0))\nm=bytes.fromhex(sys.argv[2].replace(':',''))\nwhile True:\n  f=s.recv(2048)\n  if f[6:12]==m:\n    print(f[12:14].hex()); break\n`;
          execFile('/usr/bin/python3', ['-c', py, net.uplink, mac], { timeout: BOOT_MS }, (err, stdout) =>
            resolve({ code: err === null ? 0 : 1, out: stdout.trim() }),
          );
        });
        await t.boot(id, 'Pxe', 'UEFI');
        await t.reset(id, 'On');
        await t.waitConsole(id, `net0: ${mac}`);
        expect(t.consoleText(id)).toContain('iPXE');
        expect(await sniff, 'a frame from the node on the provisioning uplink').toMatchObject({ code: 0 });
      } finally {
        await t.off(id);
      }
    });

    it('a guest that powers off ends QEMU, and the BMC reports Off', async () => {
      const id = 'node-3';
      try {
        await t.insert(id, 'halt.iso');
        await t.boot(id, 'Cd', 'Legacy');
        await t.reset(id, 'On');
        const pid = t.lab.qemu!.node(id).pid!;
        await t.waitPower(id, 'Off', BOOT_MS);
        expect(t.consoleText(id)).toContain('ESI-HALT-pc');
        expect(alive(pid)).toBe(false);
      } finally {
        await t.off(id);
      }
    });

    it('a guest that reboots boots the normal order again (its Once override was used up); media change while it runs', async () => {
      const id = 'node-4';
      try {
        t.writeDisk(id, 'hdd.iso');
        await t.insert(id, 'reboot.iso');
        await t.boot(id, 'Cd', 'UEFI');
        await t.reset(id, 'On');
        await t.waitConsole(id, 'ESI-REBOOT-efi');
        await t.waitConsole(id, 'ESI-HDD-efi');
        expect(t.lab.systems.get(id)).toMatchObject({ powerState: 'On', bootCount: 2, lastBootOverride: null });
        // Media changed while the VM runs (QMP blockdev-change-medium), booted with a reset of the same process.
        const pid = t.lab.qemu!.node(id).pid;
        await t.insert(id, 'halt.iso');
        await t.boot(id, 'Cd');
        await t.reset(id, 'ForceRestart');
        await t.waitConsole(id, 'ESI-HALT-efi');
        await t.waitPower(id, 'Off', BOOT_MS);
        expect(pid !== null && alive(pid)).toBe(false);
        expect(t.lab.systems.get(id)).toMatchObject({ bootCount: 3, lastBootOverride: 'Cd' });
      } finally {
        await t.off(id);
      }
    });

    it('GracefulShutdown presses the ACPI power button, and forces off a guest that ignores it after the timeout', async () => {
      const id = 'node-5';
      try {
        await t.insert(id, 'cd.iso');
        await t.boot(id, 'Cd', 'Legacy');
        await t.reset(id, 'On');
        await t.waitConsole(id, 'ESI-CD-pc');
        await t.reset(id, 'GracefulShutdown');
        await t.waitPower(id, 'Off');
        expect(t.consoleText(id)).toContain('forcing it off');
      } finally {
        await t.off(id);
      }
    });
  },
  QEMU_LAB_MACHINE_REASON,
);
