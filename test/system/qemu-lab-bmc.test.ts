/**
 * System test of the BMC side of the lab's QEMU nodes (src/lab/qemu/, docs/lab.md): virtual media
 * errors, the inventory python3-sushy reads compared with the VM QEMU runs, and the supervision
 * of the QEMU processes when a lab dies (parent-death signal, pidfile sweep, network clean-up).
 * Test images and the lab: ./qemu-lab-support.ts. Needs root and namespaces.
 */
import { execFile, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startLab } from '../../src/lab/index.ts';
import { describeNeeding } from '../helpers/tools.ts';
import { waitFor, waitUntilTrue } from '../helpers/wait-for.ts';
import {
  ACCEL,
  alive,
  AUTH,
  QEMU_LAB_MACHINE_REASON,
  QEMU_LAB_NEEDS,
  REPO,
  startQemuTestLab,
  type QemuTestLab,
} from './qemu-lab-support.ts';

describeNeeding(
  QEMU_LAB_NEEDS,
  'QEMU lab nodes: virtual media, inventory, supervision',
  () => {
    let t: QemuTestLab;
    beforeAll(async () => {
      t = await startQemuTestLab({ count: 2, prefix: `qb${process.pid % 10_000}`, address: `10.42.${100 + (process.pid % 50)}.1/24` });
    });
    afterAll(async () => {
      await t?.close();
    });

    it('InsertMedia of an unreachable URL or of a file that is no ISO is a Redfish error and attaches nothing; EjectMedia removes the file', async () => {
      const id = 'node-0';
      const media = path.join(t.dir, 'data/lab', id, 'media');
      const files = () => (fs.existsSync(media) ? fs.readdirSync(media) : []);
      const closed = await new Promise<number>((resolve) => {
        const s = http.createServer().listen(0, '127.0.0.1', () => {
          const p = (s.address() as { port: number }).port;
          s.close(() => resolve(p));
        });
      });
      const cases: Array<[string, string]> = [
        [`http://127.0.0.1:${closed}/x.iso`, 'Base.1.11.CouldNotEstablishConnection'],
        [`${t.base}/missing.iso`, 'Base.1.11.CouldNotEstablishConnection'],
        [`${t.base}/notes.txt`, 'Base.1.11.ActionParameterValueFormatError'],
        ['ftp://127.0.0.1/x.iso', 'Base.1.11.ActionParameterValueFormatError'],
      ];
      for (const [image, messageId] of cases) {
        const r = await t.redfish('POST', `${t.cd(id)}/Actions/VirtualMedia.InsertMedia`, { Image: image });
        expect(r.status, image).toBe(400);
        expect(r.body.error['@Message.ExtendedInfo'].map((m: { MessageId: string }) => m.MessageId)).toEqual([messageId]);
        expect((await t.redfish('GET', t.cd(id))).body).toMatchObject({ Inserted: false, Image: null });
        expect(files()).toEqual([]);
      }
      await t.insert(id, 'cd.iso');
      expect(files()).toHaveLength(1);
      expect((await t.redfish('POST', `${t.cd(id)}/Actions/VirtualMedia.EjectMedia`, {})).status).toBe(204);
      expect((await t.redfish('GET', t.cd(id))).body).toMatchObject({ Inserted: false, Image: null });
      expect(files()).toEqual([]);
    });

    it('python3-sushy inserts media, boots the CD once and reads the inventory of the VM as QEMU runs it', async () => {
      const id = 'node-1';
      const py = [
        'import json, os, sys, sushy',
        'from sushy import main as sm',
        "if not os.path.isdir(os.path.join(os.path.dirname(sm.__file__), 'standard_registries')):",
        '    sm.Sushy._get_standard_message_registry_collection = lambda self: []',
        "conn = sushy.Sushy(sys.argv[1], username='admin', password='password')",
        's = conn.get_system(sys.argv[2])',
        'm = s.managers[0]',
        'cd = m.virtual_media.get_member(m.virtual_media.members_identities[0])',
        'cd.insert_media(sys.argv[3], inserted=True, write_protected=True)',
        's.set_system_boot_options(sushy.BOOT_SOURCE_TARGET_CD, enabled=sushy.BOOT_SOURCE_ENABLED_ONCE, mode=sushy.BOOT_SOURCE_MODE_UEFI)',
        's.reset_system(sushy.RESET_ON)',
        's.refresh()',
        "print(json.dumps({'on': s.power_state == sushy.POWER_STATE_ON, 'cpus': s.processors.summary.count, 'memory_gib': s.json['MemorySummary']['TotalSystemMemoryGiB'],",
        "  'macs': sorted(s.ethernet_interfaces.summary), 'disks': sorted(s.simple_storage.disks_sizes_bytes), 'uuid': s.uuid, 'manufacturer': s.manufacturer}))",
      ].join('\n');
      try {
        const out = await new Promise<string>((resolve, reject) =>
          execFile('/usr/bin/python3', ['-c', py, t.lab.url, t.sys(id), `${t.base}/cd.iso`], { timeout: 120_000 }, (err, stdout, stderr) =>
            err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout),
          ),
        );
        const seen = JSON.parse(out.trim().split('\n').pop()!);
        const snapshot = t.lab.systems.get(id);
        expect(seen).toEqual({
          on: true,
          cpus: 2,
          memory_gib: 0.5,
          macs: [snapshot.mac],
          disks: [1024 ** 3],
          uuid: snapshot.uuid,
          manufacturer: 'QEMU',
        });
        await t.waitConsole(id, 'ESI-CD-efi');
        // (With accel auto, a KVM that cannot run OVMF has been replaced by TCG by now.)
        // The VM QEMU runs is what the BMC reports: vCPUs, memory, the NIC's MAC, the disk's size, the UUID.
        const cmdline = fs.readFileSync(`/proc/${t.lab.qemu!.node(id).pid}/cmdline`, 'utf8').split('\0');
        expect(cmdline[cmdline.indexOf('-smp') + 1]).toBe('2');
        expect(cmdline[cmdline.indexOf('-m') + 1]).toBe('512');
        expect(cmdline[cmdline.indexOf('-uuid') + 1]).toBe(snapshot.uuid);
        expect(cmdline.join(' ')).toContain(`mac=${snapshot.mac}`);
        const info = JSON.parse(
          execFileSync('qemu-img', ['info', '-U', '--output=json', path.join(t.dir, 'data/lab', id, 'disk.qcow2')], { encoding: 'utf8' }),
        );
        expect(info['virtual-size']).toBe(1024 ** 3);
      } finally {
        await t.off(id);
      }
    });

    it('a lab that dies takes its VMs with it, and the next lab clears what it left (pidfile, network)', async () => {
      const data = path.join(t.dir, 'crash');
      const prefix2 = `qc${process.pid % 10_000}`;
      const address2 = `10.42.${150 + (process.pid % 50)}.1/24`;
      const child = spawn(
        process.execPath,
        [
          path.join(REPO, 'bin/esi.js'),
          'lab',
          '--nodes',
          '0',
          '--qemu',
          '1',
          '--port',
          '0',
          '--data-dir',
          data,
          '--qemu-prefix',
          prefix2,
          '--qemu-address',
          address2,
          '--qemu-memory',
          '256',
          '--qemu-firmware',
          'bios',
          '--qemu-accel',
          ACCEL,
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let stdout = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stdout += d.toString()));
      const pidfile = path.join(data, 'lab/node-0/qemu.pid');
      let stale: ReturnType<typeof spawn> | null = null;
      try {
        // The last line esi lab prints about its QEMU nodes.
        await waitFor(
          () => stdout,
          (out) => out.includes('node-0: MAC'),
          { timeoutMs: 60_000, what: 'esi lab to start and print its QEMU nodes' },
        );
        const url = /at (http:\/\/\S+)/.exec(stdout)![1]!;
        expect(stdout).toContain(`--driver-info bridge=${prefix2}br --driver-info netns=${prefix2}-sw`);
        expect(stdout).toContain(`node-0: MAC`);
        const r = await fetch(`${url}/redfish/v1/Systems/node-0/Actions/ComputerSystem.Reset`, {
          method: 'POST',
          headers: { authorization: AUTH, 'content-type': 'application/json' },
          body: JSON.stringify({ ResetType: 'On' }),
        });
        expect(r.status).toBe(204);
        const qemuPid = Number(fs.readFileSync(pidfile, 'utf8'));
        expect(alive(qemuPid)).toBe(true);
        child.kill('SIGKILL');
        // The kernel kills QEMU with its parent (setpriv --pdeathsig KILL).
        await waitUntilTrue(() => !alive(qemuPid), { timeoutMs: 30_000, what: `QEMU ${qemuPid} to die with the lab` });
        expect(execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' })).toContain(`${prefix2}-sw`);

        // A QEMU that escaped (no parent-death signal) with the node's pidfile is ended by the next lab.
        stale = spawn('qemu-system-x86_64', ['-machine', 'none', '-nodefaults', '-display', 'none', '-S', '-pidfile', pidfile], {
          stdio: 'ignore',
          detached: true,
        });
        await waitUntilTrue(() => fs.existsSync(pidfile) && fs.readFileSync(pidfile, 'utf8').trim() === String(stale!.pid), {
          what: 'the stray QEMU pidfile',
        });
        const lab2 = await startLab({
          nodes: 0,
          port: 0,
          qemu: {
            count: 1,
            dataDir: data,
            memoryMiB: 256,
            firmware: 'bios',
            accel: ACCEL,
            network: { prefix: prefix2, provisioningAddress: address2 },
          },
        });
        let running = -1;
        try {
          await waitUntilTrue(() => !alive(stale!.pid!), { what: 'the stray QEMU to be killed' });
          expect(lab2.qemu!.network!.netns).toBe(`${prefix2}-sw`);
          await lab2.qemu!.reset('node-0', 'On');
          running = lab2.qemu!.node('node-0').pid!;
          expect(alive(running)).toBe(true);
        } finally {
          await lab2.close();
        }
        // Closing the lab ended its VM and removed its network.
        expect(alive(running)).toBe(false);
        expect(execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' })).not.toContain(`${prefix2}-sw`);
        expect(execFileSync('ip', ['-j', 'link', 'show'], { encoding: 'utf8' })).not.toContain(`"${prefix2}prov"`);
      } finally {
        child.kill('SIGKILL');
        if (stale?.pid !== undefined && alive(stale.pid)) process.kill(stale.pid, 'SIGKILL');
        try {
          execFileSync('ip', ['netns', 'del', `${prefix2}-sw`], { stdio: 'ignore' });
          execFileSync('ip', ['link', 'del', `${prefix2}prov`], { stdio: 'ignore' });
        } catch {
          // Already gone: the second lab cleaned up.
        }
      }
    });
  },
  QEMU_LAB_MACHINE_REASON,
);
