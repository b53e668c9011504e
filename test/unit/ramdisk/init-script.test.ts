/**
 * The deploy ramdisk's /init (src/ramdisk/init.sh) run by the busybox shell it runs under in the
 * ramdisk (Debian busybox-static), its functions loaded with `ESI_INIT_LIB=1`: the kernel
 * command line read as ironic-python-agent reads it (ironic_python_agent/config.py: the
 * `ipa-*` names, oslo's booleans), the agent's arguments made from it, and the agent's exit
 * statuses (10 power off, 11 reboot, else a restart) — with a stub in place of `node`, a fake
 * /sys/class/net and shell functions in place of poweroff, reboot, sync and sleep.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeNeeding, fileTool } from '../../helpers/tools.ts';

const INIT = fileURLToPath(new URL('../../../src/ramdisk/init.sh', import.meta.url));
const BUSYBOX = '/bin/busybox';

/** Run `script` in busybox sh after loading init.sh's functions; returns its standard output. */
function sh(script: string, env: Record<string, string> = {}): string {
  return execFileSync(BUSYBOX, ['sh', '-c', `. "${INIT}"\n${script}`], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ESI_INIT_LIB: '1', ...env },
    encoding: 'utf8',
  });
}

const TOKEN = 'Zm9vYmFyLXRva2VuLTEyMzQ1Njc4OTBhYmNkZWY';
const REQ = 'req-0b6f4d3e-1c2a-4b5d-8e9f-a0b1c2d3e4f5';

describeNeeding([fileTool(BUSYBOX, 'busybox-static')], 'ramdisk /init (init.sh under busybox sh)', () => {
  let sys: string;

  beforeAll(() => {
    // A fake /sys/class/net: two NICs (devices) and lo (no device).
    sys = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-init-sys-'));
    for (const [nic, mac] of [
      ['eth0', '52:54:00:aa:bb:01'],
      ['eth1', '52:54:00:aa:bb:02'],
    ] as const) {
      fs.mkdirSync(path.join(sys, 'class/net', nic, 'device'), { recursive: true });
      fs.writeFileSync(path.join(sys, 'class/net', nic, 'address'), `${mac}\n`);
    }
    fs.mkdirSync(path.join(sys, 'class/net/lo'), { recursive: true });
    fs.writeFileSync(path.join(sys, 'class/net/lo/address'), '00:00:00:00:00:00\n');
  });

  afterAll(() => {
    if (sys) fs.rmSync(sys, { recursive: true, force: true });
  });

  it('reads the ipa-* kernel parameters the way IPA names them, quotes removed, the last one winning', () => {
    const cmdline =
      `BOOT_IMAGE=/esi/vmlinuz console=ttyS0,115200 console=tty0 ipa-api-url=http://old:6385 ` +
      `ipa-api-url="http://10.0.0.1:6385,http://10.0.0.2:6385" ipa-insecure=1 ipa-debug=True ipa-agent-token=${TOKEN} ` +
      `ipa-global-request-id=${REQ} ipa-inspection-callback-url=http://10.0.0.1:6385/v1/continue_inspection ` +
      `ipa-advertise-host=192.0.2.7 ipa-listen-port=9998 BOOTIF=01-52-54-00-aa-bb-01 boot_method=vmedia`;
    const out = sh(
      `parse_cmdline '${cmdline}'
       printf '%s|' "$IPA_API_URL" "$IPA_INSECURE" "$IPA_DEBUG" "$IPA_AGENT_TOKEN" "$IPA_GLOBAL_REQUEST_ID" \\
         "$IPA_INSPECTION_CALLBACK_URL" "$IPA_ADVERTISE_HOST" "$IPA_LISTEN_PORT"`,
    );
    expect(out.split('|').slice(0, -1)).toEqual([
      'http://10.0.0.1:6385,http://10.0.0.2:6385',
      '1',
      'True',
      TOKEN,
      REQ,
      'http://10.0.0.1:6385/v1/continue_inspection',
      '192.0.2.7',
      '9998',
    ]);
  });

  it('leaves absent parameters empty, takes a bare name as 1 and does not expand glob characters', () => {
    const out = sh(
      `parse_cmdline 'quiet ipa-debug ipa-agent-token=* other=1'; printf '[%s][%s][%s][%s]' "$IPA_API_URL" "$IPA_DEBUG" "$IPA_AGENT_TOKEN" "$IPA_INSECURE"`,
    );
    expect(out).toBe('[][1][*][]');
  });

  it("takes oslo's true values (1, t, true, on, y, yes in any case) and nothing else as true", () => {
    const verdicts = sh(
      `for v in 1 t T true TRUE True on ON y Y yes YES 0 f false no off '' 2 truth; do if is_true "$v"; then printf 1; else printf 0; fi; done`,
    );
    expect(verdicts).toBe('1'.repeat(12) + '0'.repeat(8));
  });

  it('makes the agent arguments: --disk auto, every MAC, the advertise host auto, and the optional flags only when given', () => {
    const minimal = sh(`parse_cmdline 'ipa-api-url=http://10.0.0.1:6385'; agent_argv 52:54:00:aa:bb:01`);
    expect(minimal.trim().split('\n')).toEqual([
      '/esi-agent.mjs',
      'agent',
      '--api-url',
      'http://10.0.0.1:6385',
      '--disk',
      'auto',
      '--listen-host',
      '0.0.0.0',
      '--listen-port',
      '9999',
      '--advertise-host',
      'auto',
      '--mac',
      '52:54:00:aa:bb:01',
    ]);
    const full = sh(
      `parse_cmdline 'ipa-api-url=http://a ipa-agent-token=${TOKEN} ipa-debug=yes ipa-global-request-id=${REQ} ipa-inspection-callback-url=http://a/v1/continue_inspection'
       agent_argv m1 m2`,
    );
    expect(full.trim().split('\n').slice(12)).toEqual([
      '--mac',
      'm1',
      '--mac',
      'm2',
      '--inspection-callback-url',
      'http://a/v1/continue_inspection',
      '--agent-token',
      TOKEN,
      '--global-request-id',
      REQ,
      '--debug',
    ]);
  });

  it("runs the agent with every NIC's MAC and powers off when it exits with 10, never printing the token", () => {
    const stub = path.join(sys, 'node-stub');
    fs.writeFileSync(stub, '#!/bin/busybox sh\nfor a in "$@"; do echo "ARG $a"; done\nexit 10\n', { mode: 0o755 });
    const out = sh(
      `poweroff() { echo POWEROFF "$@"; exit 0; }
       sync() { :; }
       parse_cmdline 'ipa-api-url=http://10.0.2.2:6385/baremetal ipa-agent-token=${TOKEN}'
       run_agent`,
      { ESI_SYS: sys, ESI_NODE: stub },
    );
    const args = out
      .split('\n')
      .filter((l) => l.startsWith('ARG '))
      .map((l) => l.slice(4));
    expect(args).toContain('--agent-token');
    const macs = args.flatMap((a, i) => (a === '--mac' ? [args[i + 1]] : []));
    expect(macs).toEqual(['52:54:00:aa:bb:01', '52:54:00:aa:bb:02']);
    expect(out).toContain('esi-init: the agent asked to power off');
    expect(out).toContain('POWEROFF -f');
    expect(
      out
        .split('\n')
        .filter((l) => !l.startsWith('ARG '))
        .join('\n'),
    ).not.toContain(TOKEN);
  });

  it('reboots when the agent exits with 11, and restarts it after a pause on any other status', () => {
    const stub = path.join(sys, 'node-exit');
    fs.writeFileSync(stub, '#!/bin/busybox sh\nexit "$STUB_STATUS"\n', { mode: 0o755 });
    const run = (status: string) =>
      sh(
        `reboot() { echo REBOOT "$@"; exit 0; }
         poweroff() { echo POWEROFF; exit 0; }
         sleep() { echo "SLEEP $1"; exit 0; }
         sync() { :; }
         parse_cmdline 'ipa-api-url=http://x'
         run_agent`,
        { ESI_SYS: sys, ESI_NODE: stub, STUB_STATUS: status },
      );
    expect(run('11')).toContain('REBOOT -f');
    const crashed = run('1');
    expect(crashed).toContain('esi-init: the agent exited with status 1; restarting it in 10 s');
    expect(crashed).toContain('SLEEP 10');
    expect(crashed).not.toMatch(/REBOOT|POWEROFF/);
  });

  it('without ipa-api-url says so on the console and waits instead of starting the agent', () => {
    const out = sh(`sleep() { echo "SLEEP $1"; exit 0; }; parse_cmdline 'console=ttyS0'; wait_for_api_url; echo NOT-REACHED`);
    expect(out).toContain('esi-init: ERROR: no ipa-api-url=<baremetal API URL> on the kernel command line');
    expect(out).toContain('SLEEP 60');
    expect(out).not.toContain('NOT-REACHED');
  });
});
