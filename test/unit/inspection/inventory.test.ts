/**
 * Unit tests of inspection's pure parts: IPA inventory validation, LLDP TLV decoding (round
 * trip with the agent's encoder), facts and processing, inspection rules, lab model files.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { lldpTlvs } from '../../../src/agent/inventory.ts';
import { decodeLldp, encodeLldp, inspectionFacts, validateInspectionData } from '../../../src/domain/inspection/inventory.ts';
import { planInspection } from '../../../src/domain/inspection/process.ts';
import { parseInspectionRules } from '../../../src/domain/inspection/rules.ts';
import { loadLabModel, parseLabModel, parseModelSpec, shippedModels } from '../../../src/lab/hardware.ts';

const GIB = 1024 ** 3;
const base = () => ({
  cpu: { count: 8, architecture: 'x86_64' },
  memory: { physical_mb: 16384 },
  interfaces: [] as any[],
  disks: [] as any[],
});

describe('LLDP', () => {
  it('decodes what the agent encodes (chassis MAC, port name, system name)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 6, maxLength: 6 }),
        fc.stringMatching(/^[A-Za-z0-9/._-]{1,30}$/),
        fc.stringMatching(/^[a-z0-9.-]{1,40}$/),
        (mac, port, name) => {
          const chassisId = mac.map((b) => b.toString(16).padStart(2, '0')).join(':');
          expect(decodeLldp(lldpTlvs({ chassisId, portId: port, systemName: name }))).toEqual({
            switch_id: chassisId,
            port_id: port,
            switch_info: name,
          });
        },
      ),
    );
  });

  it('the domain encoder (redfish LLDPReceive) matches the agent and round-trips text chassis ids', () => {
    const n = { chassisId: '02:e5:1a:00:00:01', portId: 'Ethernet3', systemName: 'sw' };
    expect(encodeLldp(n)).toEqual(lldpTlvs(n));
    expect(decodeLldp(encodeLldp({ chassisId: 'switch-7', portId: 'xe-0/0/1', systemName: null }))).toEqual({
      switch_id: 'switch-7',
      port_id: 'xe-0/0/1',
    });
  });

  it('skips malformed TLVs and reads text subtypes', () => {
    expect(decodeLldp([[1, 'zz'], [2, '05'], 'x', [5]])).toEqual({});
    expect(
      decodeLldp([
        [1, Buffer.from('\x07sw-a').toString('hex')],
        [2, Buffer.from('\x03').toString('hex') + 'aabbccddeeff'],
      ]),
    ).toEqual({ switch_id: 'sw-a', port_id: 'aa:bb:cc:dd:ee:ff' });
    expect(decodeLldp(null)).toEqual({});
  });
});

describe('validateInspectionData', () => {
  it('accepts an IPA inventory and keeps the other keys as plugin data', () => {
    const r = validateInspectionData({ inventory: base(), root_disk: null, pci_devices: [] });
    expect(r.pluginData).toEqual({ root_disk: null, pci_devices: [] });
  });
  it.each([
    [null, /JSON object/],
    [{ inventory: 'x' }, /"inventory"/],
    [{ inventory: { ...base(), cpu: { count: 1.5, architecture: 'x86_64' } } }, /cpu\.count/],
    [{ inventory: { ...base(), cpu: { count: 1 } } }, /architecture/],
    [{ inventory: { ...base(), memory: { physical_mb: -1 } } }, /memory/],
    [{ inventory: { ...base(), interfaces: {} } }, /interfaces/],
    [{ inventory: { ...base(), interfaces: [{ mac_address: '00:11' }] } }, /mac_address/],
    [{ inventory: { ...base(), disks: [{ size: 'big' }] } }, /disks\[0\]\.size/],
  ])('refuses %j', (body, re) => {
    expect(() => validateInspectionData(body)).toThrow(re);
  });
});

describe('facts and processing', () => {
  const inv = {
    ...base(),
    interfaces: [
      {
        name: 'eno1',
        mac_address: 'AA:00:00:00:00:01',
        lldp: lldpTlvs({ chassisId: '02:00:00:00:00:09', portId: 'Ethernet7', systemName: 'sw9' }),
      },
      { name: 'eno2', mac_address: 'aa:00:00:00:00:02', lldp: null },
      { name: 'lo', mac_address: null },
    ],
    disks: [{ size: 2 * GIB }, { size: 100 * GIB + 5 }, { size: 40 * GIB }],
    boot: { current_boot_mode: 'uefi', pxe_interface: 'aa:00:00:00:00:01' },
  };
  it('derives Ironic properties: local_gb = the root device (without root_disk: smallest disk ≥ 4 GiB) in GiB − 1', () => {
    const f = inspectionFacts(inv, { pci_devices: [{ class: '030200' }, { class: '020000' }] });
    // 40 GiB: the 2 GiB disk is under IPA's 4 GiB minimum, the 100 GiB one is not the smallest.
    expect(f.properties).toEqual({ cpus: 8, cpu_arch: 'x86_64', memory_mb: 16384, local_gb: 39 });
    expect(f.gpuCount).toBe(1);
    expect(f.nics.map((n) => [n.mac, n.pxe])).toEqual([
      ['aa:00:00:00:00:01', true],
      ['aa:00:00:00:00:02', false],
    ]);
  });
  it("takes local_gb from the plugin data's root_disk (the agent's or the redfish driver's choice); null is a disk-less node", () => {
    expect(inspectionFacts(inv, { root_disk: { name: '/dev/sdb', size: 100 * GIB + 5 } }).properties.local_gb).toBe(99);
    expect(inspectionFacts(inv, { root_disk: { name: 'os', size: 4 * GIB } }).properties.local_gb).toBe(3);
    expect(inspectionFacts(inv, { root_disk: null }).properties.local_gb).toBe(0);
    expect(inspectionFacts({ ...inv, disks: [{ size: 4 * GIB - 1 }] }, {}).properties.local_gb).toBe(0);
    expect(() => validateInspectionData({ inventory: inv, root_disk: { name: 'x' } })).toThrow(/root_disk must be null or a disk/);
    expect(() => validateInspectionData({ inventory: inv, root_disk: 'sda' })).toThrow(/root_disk/);
    expect(validateInspectionData({ inventory: inv, root_disk: null }).pluginData).toEqual({ root_disk: null });
  });
  it('a node without a boot mode in its inventory gets no boot_mode capability', () => {
    const facts = inspectionFacts({ ...inv, boot: { current_boot_mode: null, pxe_interface: null } }, {});
    expect(facts.bootMode).toBeNull();
    const out = planInspection({ properties: { capabilities: 'x:y' }, traits: [], resource_class: null }, facts, [], [], {}, () => 'u');
    expect(out.nodeChanges.properties?.capabilities).toBe('x:y');
  });
  it('creates missing ports, updates pxe and LLDP of existing ones, applies rules in order', () => {
    const rules = parseInspectionRules([
      { conditions: 'gpus >= 1', actions: [{ action: 'add-trait', trait: 'CUSTOM_GPU' }] },
      { conditions: '"CUSTOM_GPU" in traits and memory_mb >= 16384', actions: [{ action: 'set-resource-class', value: 'gpu.big' }] },
      { conditions: 'nics > 5', actions: [{ action: 'add-trait', trait: 'CUSTOM_MANY_NICS' }] },
    ]);
    let n = 0;
    const out = planInspection(
      { properties: { capabilities: 'x:y' }, traits: ['CUSTOM_A'], resource_class: null },
      inspectionFacts(inv, { pci_devices: [{ class: '030200' }] }),
      [{ uuid: 'p2', address: 'aa:00:00:00:00:02', pxe_enabled: true, local_link_connection: {} }],
      rules,
      { pci_devices: [] },
      () => `new-${n++}`,
    );
    expect(out.ports.creates).toEqual([
      {
        uuid: 'new-0',
        address: 'aa:00:00:00:00:01',
        pxe_enabled: true,
        local_link_connection: { switch_id: '02:00:00:00:00:09', port_id: 'Ethernet7', switch_info: 'sw9' },
      },
    ]);
    expect(out.ports.updates).toEqual([{ uuid: 'p2', pxe_enabled: false }]);
    expect(out.nodeChanges.traits).toEqual(['CUSTOM_A', 'CUSTOM_GPU']);
    expect(out.nodeChanges.resource_class).toBe('gpu.big');
    expect(out.nodeChanges.properties).toMatchObject({ cpus: 8, local_gb: 39, capabilities: 'x:y,boot_mode:uefi' });
    expect(out.pluginData.rules_applied).toHaveLength(2);
  });
});

describe('inspection rules file', () => {
  it.each([
    ['not a list', /list/],
    [[{ conditions: 'gpus >=', actions: [{ action: 'add-trait', trait: 'CUSTOM_X' }] }], /rule 1/],
    [[{ conditions: 'gpus >= 1', actions: [] }], /actions/],
    [[{ conditions: 'gpus >= 1', actions: [{ action: 'add-trait', trait: 'lower' }] }], /trait/],
    [[{ conditions: 'gpus >= 1', actions: [{ action: 'explode' }] }], /unknown action/],
  ])('refuses %j', (doc, re) => {
    expect(() => parseInspectionRules(doc)).toThrow(re);
  });
});

describe('lab models', () => {
  it('ships gpu, storage and small models with the advertised hardware', () => {
    expect(shippedModels()).toEqual(expect.arrayContaining(['gpu', 'small', 'storage']));
    const gpu = loadLabModel('gpu');
    expect(gpu.gpus.reduce((s, g) => s + g.count, 0)).toBe(8);
    expect(gpu.memoryMiB).toBe(1024 * 1024);
    expect(loadLabModel('storage').disks.reduce((s, d) => s + d.count, 0)).toBeGreaterThanOrEqual(24);
    expect(parseModelSpec('gpu:2, small').map((m) => m.name)).toEqual(['gpu', 'gpu', 'small']);
  });
  it('refuses bad specs and bad model documents with the field at fault', () => {
    expect(() => parseModelSpec('gpu:0')).toThrow(/Invalid lab model spec/);
    expect(() => parseModelSpec('nosuch')).toThrow(/Unknown lab model/);
    expect(() =>
      parseLabModel(
        {
          name: 'x',
          system: { manufacturer: 'a', product: 'b' },
          cpu: { model: 'c', sockets: 0, cores: 1 },
          memory: { size_gib: 1 },
          disks: [{ name: '/dev/sda', size_gb: 1, model: 'm' }],
          nics: [{ name: 'e' }],
        },
        't',
      ),
    ).toThrow(/cpu\.sockets/);
    expect(() =>
      parseLabModel(
        {
          name: 'x',
          system: { manufacturer: 'a', product: 'b' },
          cpu: { model: 'c', sockets: 1, cores: 1 },
          memory: { size_gib: 1 },
          disks: [{ name: '/dev/sda', count: 2, size_gb: 1, model: 'm' }],
          nics: [{ name: 'e' }],
        },
        't',
      ),
    ).toThrow(/%l or %n/);
  });
});

describe('loadInspectionRules (ESI_INSPECTION_RULES)', () => {
  it('reads a YAML file; a bad file names itself and the rule at fault; none configured is no rules', async () => {
    const { loadInspectionRules } = await import('../../../src/server/inspection.ts');
    const fs = await import('node:fs');
    const os = await import('node:os');
    const path = await import('node:path');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-rules-'));
    try {
      const good = path.join(dir, 'good.yaml');
      fs.writeFileSync(good, '- conditions: gpus >= 1\n  actions: [{action: add-trait, trait: CUSTOM_GPU}]\n');
      expect(loadInspectionRules({ inspectionRulesFile: good })).toHaveLength(1);
      const bad = path.join(dir, 'bad.yaml');
      fs.writeFileSync(bad, '- conditions: gpus >= 1\n  actions: [{action: add-trait, trait: gpu}]\n');
      expect(() => loadInspectionRules({ inspectionRulesFile: bad })).toThrow(/bad\.yaml.*rule 1/);
      expect(() => loadInspectionRules({ inspectionRulesFile: path.join(dir, 'missing.yaml') })).toThrow(/missing\.yaml/);
      expect(loadInspectionRules({ inspectionRulesFile: null })).toEqual([]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
