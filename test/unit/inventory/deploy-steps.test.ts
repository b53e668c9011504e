/**
 * Deploy step plans (src/domain/inventory/deploy-steps.ts, after Ironic 21.4
 * `ironic/conductor/steps.py`): which steps a node offers, how the steps of matching deploy
 * templates and of the request join the node's own and in which order they run, the refusals
 * (unknown steps, arguments, the core and agent steps, duplicates), instance traits, and the
 * parsing of one step.
 */
import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../../src/domain/errors.ts';
import {
  aroundCore,
  instanceTraits,
  offeredDeploySteps,
  parseDeployStep,
  planDeploySteps,
  stepId,
  type DeployStep,
  type DeployStepNode,
} from '../../../src/domain/inventory/deploy-steps.ts';

const REDFISH_HW = { bios: {} as never, raid: {} as never };
const NO_HW = {};

function node(extra: Partial<DeployStepNode> = {}): DeployStepNode {
  return { uuid: 'n-1', deploy_interface: 'fake', bios_interface: 'fake', raid_interface: 'fake', ...extra };
}

function step(iface: string, name: string, priority: number, args: Record<string, unknown> = {}): DeployStep {
  return { interface: iface, step: name, args, priority };
}

const SETTINGS = { settings: [{ name: 'ProcVirtualization', value: 'Disabled' }] };
const RAID = { raid_config: { logical_disks: [{ size_gb: 10, raid_level: '1', is_root_volume: true }] } };

/** The plan's steps as `interface.step@priority`. */
function ids(steps: readonly DeployStep[]): string[] {
  return steps.map((s) => `${stepId(s)}@${s.priority}`);
}

describe('the steps a node offers', () => {
  it('a fake deploy offers the core step; fake bios and raid their out-of-band steps', () => {
    expect(offeredDeploySteps(node(), NO_HW).map(stepId)).toEqual([
      'deploy.deploy',
      'bios.apply_configuration',
      'bios.factory_reset',
      'raid.apply_configuration',
      'raid.delete_configuration',
    ]);
  });

  it('an agent deploy adds its fixed steps; no-bios/no-raid, or a hardware type without them, offer none', () => {
    const offered = offeredDeploySteps(node({ deploy_interface: 'direct', bios_interface: 'no-bios', raid_interface: 'redfish' }), NO_HW);
    expect(offered.map((o) => `${stepId(o)}@${o.priority}`)).toEqual([
      'deploy.deploy@100',
      'deploy.write_image@80',
      'deploy.prepare_instance_boot@60',
      'deploy.tear_down_agent@40',
      'deploy.switch_to_tenant_network@30',
      'deploy.boot_instance@20',
    ]);
    const redfish = offeredDeploySteps(node({ bios_interface: 'redfish', raid_interface: 'redfish' }), REDFISH_HW);
    expect(redfish.filter((o) => o.role === 'out-of-band')).toHaveLength(4);
  });
});

describe('planDeploySteps', () => {
  const plan = (templates: Array<{ name: string; steps: DeployStep[] }>, requested: DeployStep[] = [], n = node()) =>
    planDeploySteps({ node: n, hw: REDFISH_HW, templates, requested, skipMissing: false });

  it("without templates: the node's own enabled steps, in priority order", () => {
    expect(ids(plan([]))).toEqual(['deploy.deploy@100']);
    expect(ids(plan([], [], node({ deploy_interface: 'direct' })))).toEqual([
      'deploy.deploy@100',
      'deploy.write_image@80',
      'deploy.prepare_instance_boot@60',
      'deploy.tear_down_agent@40',
      'deploy.switch_to_tenant_network@30',
      'deploy.boot_instance@20',
    ]);
  });

  it('joins the enabled steps of every matching template, highest priority first, ties by interface', () => {
    const steps = plan([
      { name: 'CUSTOM_RAID', steps: [step('raid', 'apply_configuration', 100, RAID), step('raid', 'delete_configuration', 0)] },
      { name: 'CUSTOM_BIOS', steps: [step('bios', 'apply_configuration', 150, SETTINGS), step('bios', 'factory_reset', 10)] },
    ]);
    // deploy (3) ranks above raid (1) at priority 100; the priority-0 step is left out.
    expect(ids(steps)).toEqual([
      'bios.apply_configuration@150',
      'deploy.deploy@100',
      'raid.apply_configuration@100',
      'bios.factory_reset@10',
    ]);
    expect(steps[0]!.args).toEqual(SETTINGS);
    const { before, after } = aroundCore(steps);
    expect(ids(before)).toEqual(['bios.apply_configuration@150']);
    expect(ids(after)).toEqual(['raid.apply_configuration@100', 'bios.factory_reset@10']);
  });

  it("the request's deploy_steps override a template's step of the same interface.step", () => {
    const steps = plan(
      [{ name: 'CUSTOM_BIOS', steps: [step('bios', 'apply_configuration', 150, SETTINGS), step('bios', 'factory_reset', 120)] }],
      [step('bios', 'factory_reset', 0), step('raid', 'delete_configuration', 200)],
    );
    expect(ids(steps)).toEqual(['raid.delete_configuration@200', 'bios.apply_configuration@150', 'deploy.deploy@100']);
  });

  it('refuses a step the node does not offer, naming the templates; skipMissing leaves it for the deploy', () => {
    const templates = [
      { name: 'CUSTOM_A', steps: [step('deploy', 'write_firmware', 90)] },
      { name: 'CUSTOM_B', steps: [step('bios', 'factory_reset', 10)] },
    ];
    expect(() => plan(templates)).toThrow(
      /^Validation of deploy steps from deploy templates matching this node's instance traits failed\. Matching deploy templates: CUSTOM_A,CUSTOM_B\. Errors: node does not support this deploy step: .*write_firmware/,
    );
    const lenient = planDeploySteps({ node: node(), hw: REDFISH_HW, templates, requested: [], skipMissing: true });
    expect(ids(lenient)).toEqual(['deploy.deploy@100', 'bios.factory_reset@10']);
    // A hardware type without BIOS support offers no bios step: refused on a redfish node without it.
    expect(() =>
      planDeploySteps({
        node: node({ bios_interface: 'redfish' }),
        hw: NO_HW,
        templates: [templates[1]!],
        requested: [],
        skipMissing: false,
      }),
    ).toThrow(/does not support this deploy step/);
  });

  it('refuses arguments a step does not take, missing required ones, and bad values (each error listed)', () => {
    const err = (() => {
      try {
        plan([
          {
            name: 'CUSTOM_X',
            steps: [step('bios', 'apply_configuration', 150, {}), step('raid', 'delete_configuration', 5, { force: true })],
          },
        ]);
      } catch (e) {
        return e as InvalidInputError;
      }
      throw new Error('no error');
    })();
    expect(err).toBeInstanceOf(InvalidInputError);
    expect(err.code).toBe('InvalidParameterValue');
    expect(err.message).toMatch(/missing these required arguments: settings \(A list of BIOS settings to be applied\)/);
    expect(err.message).toMatch(/; deploy step .*delete_configuration.* has these unexpected arguments: force/);
    // A disabled step needs no arguments.
    expect(ids(plan([{ name: 'CUSTOM_X', steps: [step('bios', 'apply_configuration', 0, {})] }]))).toEqual(['deploy.deploy@100']);
    expect(() => plan([{ name: 'CUSTOM_X', steps: [step('bios', 'apply_configuration', 1, { settings: [] })] }])).toThrow(
      /"settings" must be a non-empty list/,
    );
    expect(() =>
      plan([{ name: 'CUSTOM_X', steps: [step('raid', 'apply_configuration', 1, { raid_config: { logical_disks: [{ size_gb: 1 }] } })] }]),
    ).toThrow(/invalid "raid_config"/);
  });

  it('refuses to override or disable the core step and the agent steps', () => {
    expect(() => plan([{ name: 'CUSTOM_X', steps: [step('deploy', 'deploy', 150)] }])).toThrow(/deploy on interface deploy is a core step/);
    expect(() => plan([{ name: 'CUSTOM_X', steps: [step('deploy', 'deploy', 0)] }])).toThrow(/core step/);
    expect(() => plan([{ name: 'CUSTOM_X', steps: [step('deploy', 'write_image', 0)] }], [], node({ deploy_interface: 'direct' }))).toThrow(
      /write_image on interface deploy is part of esi's agent deploy/,
    );
  });

  it('refuses one interface.step named by two matching templates', () => {
    expect(() =>
      plan([
        { name: 'CUSTOM_A', steps: [step('bios', 'factory_reset', 10)] },
        { name: 'CUSTOM_B', steps: [step('bios', 'factory_reset', 20)] },
      ]),
    ).toThrow(/cannot have the same interface and step\. Duplicate deploy steps for bios\.factory_reset/);
  });
});

describe('instance traits', () => {
  const n = (traits: string[], ii: unknown) => ({ uuid: 'n-1', traits, instance_info: { traits: ii } as Record<string, unknown> });

  it('are the instance_info traits, each one of the node', () => {
    expect(instanceTraits(n(['CUSTOM_A', 'CUSTOM_B'], ['CUSTOM_B']))).toEqual(['CUSTOM_B']);
    expect(instanceTraits(n([], undefined))).toEqual([]);
    expect(instanceTraits(n([], []))).toEqual([]);
  });

  it('refuses traits the node lacks, and values that are not lists of strings', () => {
    expect(() => instanceTraits(n(['CUSTOM_A'], ['CUSTOM_A', 'CUSTOM_Z']))).toThrow(
      'Cannot specify instance traits that are not also set on the node. Node n-1 is missing traits CUSTOM_Z',
    );
    expect(() => instanceTraits(n(['CUSTOM_A'], 'CUSTOM_A'))).toThrow(/A list of strings is expected/);
    expect(() => instanceTraits(n(['CUSTOM_A'], [1]))).toThrow(/A list of strings is expected/);
  });
});

describe('parseDeployStep', () => {
  it('normalises a string priority to an integer', () => {
    expect(parseDeployStep({ interface: 'raid', step: 'x', args: {}, priority: '15' }, 's')).toEqual(step('raid', 'x', 15));
  });

  it.each([
    [{ interface: 'boot', step: 'x', args: {}, priority: 1 }, /'boot' is not one of \['power', 'management', 'deploy', 'bios', 'raid'\]/],
    [{ interface: 'deploy', step: 'x', args: {}, priority: -1 }, /-1 is less than the minimum of 0/],
    [{ interface: 'deploy', step: 'x', args: {}, priority: 1.5 }, /'priority' must be an integer/],
    [{ interface: 'deploy', step: '', args: {}, priority: 1 }, /'step' must be a non-empty string/],
    [{ interface: 'deploy', step: 'x', priority: 1 }, /'args' is a required property/],
    [{ interface: 'deploy', step: 'x', args: [], priority: 1 }, /'args' must be an object/],
    [{ interface: 'deploy', step: 'x', args: {}, priority: 1, foo: 1 }, /'foo' was unexpected/],
    ['deploy.x', /must be an object/],
  ])('refuses %j', (raw, message) => {
    expect(() => parseDeployStep(raw, 'steps[0]')).toThrow(message);
  });
});
