/**
 * Suites that need programs installed on the machine (Debian's openstack CLI, python3-sushy,
 * ipmitool and ipmi_sim, the real Ironic, qemu-img, …) and suites that need something of the
 * machine itself (root, a kernel feature).
 *
 * CI (`.ci/run`) installs every tool, so a missing tool is a failure: the suite is replaced by
 * one failing test that names the Debian packages to install, and none of its hooks run. A
 * developer who deliberately runs without some tools sets `ESI_TEST_ALLOW_MISSING_TOOLS=1`;
 * the suite is then skipped, and the reason printed when the file is collected.
 *
 * A machine that cannot run a suite at all (not root, no network namespaces, no /dev/kvm) is
 * the only other reason to skip: {@link describeOnMachine} prints the reason, whatever the
 * environment says.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { describe, it, type TestFunction } from 'vitest';

/** The environment variable that turns a missing tool into a skip instead of a failure. */
export const ALLOW_MISSING_TOOLS_ENV = 'ESI_TEST_ALLOW_MISSING_TOOLS';

/** True when the developer allowed suites to skip for missing tools. */
export function missingToolsAllowed(): boolean {
  const v = process.env[ALLOW_MISSING_TOOLS_ENV];
  return v !== undefined && v !== '' && v !== '0' && v.toLowerCase() !== 'false';
}

/** Something a suite needs installed: how to find it and which Debian package brings it. */
export interface Tool {
  /** What is looked for (a path, a command, a Python module), shown when it is missing. */
  readonly what: string;
  /** The Debian package that installs it. */
  readonly pkg: string;
  /** Whether it is there (computed once). */
  readonly present: boolean;
}

function memo(what: string, pkg: string, check: () => boolean): Tool {
  let cached: boolean | undefined;
  return {
    what,
    pkg,
    get present() {
      cached ??= check();
      return cached;
    },
  };
}

/** A file or directory that must exist. */
export function fileTool(file: string, pkg: string): Tool {
  return memo(file, pkg, () => fs.existsSync(file));
}

/** A command that must be on the PATH. */
export function commandTool(command: string, pkg: string): Tool {
  return memo(`command ${command}`, pkg, () => spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0);
}

/** A Python module that Debian's `/usr/bin/python3` must import. */
export function pythonModuleTool(module: string, pkg: string): Tool {
  return memo(
    `/usr/bin/python3 -c 'import ${module}'`,
    pkg,
    () => spawnSync('/usr/bin/python3', ['-c', `import ${module}`], { stdio: 'ignore' }).status === 0,
  );
}

/** The tools the suites need (`.ci/run` installs each package). */
export const TOOLS = {
  openstack: fileTool('/usr/bin/openstack', 'python3-openstackclient'),
  ironicClient: fileTool('/usr/lib/python3/dist-packages/ironicclient', 'python3-ironicclient'),
  neutronClient: fileTool('/usr/lib/python3/dist-packages/neutronclient/osc/v2/trunk/network_trunk.py', 'python3-neutronclient'),
  novaClient: fileTool('/usr/lib/python3/dist-packages/novaclient', 'python3-novaclient'),
  openstackSdkImage: fileTool('/usr/lib/python3/dist-packages/openstack/image/v2/_proxy.py', 'python3-openstacksdk'),
  sushy: pythonModuleTool('sushy', 'python3-sushy'),
  ipmitool: commandTool('ipmitool', 'ipmitool'),
  ipmiSim: commandTool('ipmi_sim', 'openipmi'),
  ironicApi: commandTool('ironic-api', 'ironic-api'),
  ironicConductor: commandTool('ironic-conductor', 'ironic-conductor'),
  ironicDbsync: commandTool('ironic-dbsync', 'ironic-api'),
  qemuImg: commandTool('qemu-img', 'qemu-utils'),
  genisoimage: commandTool('genisoimage', 'genisoimage'),
  script: commandTool('script', 'bsdutils'),
  iproute2: commandTool('ip', 'iproute2'),
} as const;

/** Debian's openstack CLI with the baremetal plugin. */
export const OPENSTACK_BAREMETAL: readonly Tool[] = [TOOLS.openstack, TOOLS.ironicClient];
/** ipmitool and openipmi's ipmi_sim. */
export const IPMI_TOOLS: readonly Tool[] = [TOOLS.ipmitool, TOOLS.ipmiSim];

/**
 * What is missing of `tools`, as an instruction: `install python3-openstackclient (missing:
 * /usr/bin/openstack)`; null when everything is there.
 */
export function missingTools(tools: readonly Tool[]): string | null {
  const missing = tools.filter((t) => !t.present);
  if (missing.length === 0) return null;
  const pkgs = [...new Set(missing.map((t) => t.pkg))];
  return `install ${pkgs.join(', ')} (missing: ${missing.map((t) => t.what).join(', ')})`;
}

function failureMessage(name: string, missing: string): string {
  return (
    `"${name}" cannot run: ${missing}. CI installs every tool (.ci/run); ` +
    `set ${ALLOW_MISSING_TOOLS_ENV}=1 to skip such suites deliberately instead.`
  );
}

/**
 * `describe` of a suite that needs `tools` (and, optionally, something of the machine).
 * - Everything there: the suite as written.
 * - A tool missing: one failing test naming the packages to install (the suite's hooks and tests
 *   do not run), or, with `ESI_TEST_ALLOW_MISSING_TOOLS=1`, the suite skipped with the reason
 *   printed at collection.
 * - The tools there but `machineReason` set (why this machine cannot run the suite: not root, a
 *   kernel feature, a device): skipped whatever the environment says, the reason printed at
 *   collection and shown in the summary as the note of the suite's one skipped test.
 */
export function describeNeeding(tools: readonly Tool[], name: string, body: () => void, machineReason: string | null = null): void {
  const missing = missingTools(tools);
  if (missing !== null && missingToolsAllowed()) {
    console.warn(`SKIPPED (${ALLOW_MISSING_TOOLS_ENV} is set): "${name}": ${missing}`);
    describe.skip(name, body);
  } else if (missing !== null) {
    describe(name, () => {
      it(`needs its tools: ${missing}`, () => {
        throw new Error(failureMessage(name, missing));
      });
    });
  } else if (machineReason !== null) {
    console.warn(`SKIPPED (this machine): "${name}": ${machineReason}`);
    describe(name, () => {
      it(`skipped on this machine: ${machineReason}`, (ctx) => ctx.skip(machineReason));
    });
  } else {
    describe(name, body);
  }
}

/** `it` of a single test that needs `tools`; as {@link describeNeeding}. */
export function itNeeding(tools: readonly Tool[], name: string, fn: TestFunction, timeoutMs?: number): void {
  const missing = missingTools(tools);
  if (missing === null) {
    it(name, fn, timeoutMs);
  } else if (missingToolsAllowed()) {
    console.warn(`SKIPPED (${ALLOW_MISSING_TOOLS_ENV} is set): "${name}": ${missing}`);
    it.skip(name, fn, timeoutMs);
  } else {
    it(name, () => {
      throw new Error(failureMessage(name, missing));
    });
  }
}

/**
 * `describe` of a suite that needs something of the machine (root, a kernel feature, a device):
 * `reason` is why this machine cannot run it, or null; as {@link describeNeeding} without tools.
 */
export function describeOnMachine(reason: string | null, name: string, body: () => void): void {
  describeNeeding([], name, body, reason);
}
