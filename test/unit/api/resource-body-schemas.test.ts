/**
 * The parsers of src/api/baremetal/resource-body-schemas.ts: a refused body gets the words it
 * got before the schemas (the heartbeat's own checks; the domain's for allocations, deploy
 * templates, events and inspection data), an admitted one comes back unchanged and typed, and
 * each schema admits the bodies the domain admits (so the schema check after the domain's
 * refuses nothing the domain let through).
 */
import { Value } from '@sinclair/typebox/value';
import { describe, expect, it } from 'vitest';
import {
  AllocationCreateBody,
  DeployTemplateCreateBody,
  EventsBody,
  HeartbeatBody,
  InspectionDataBody,
  parseAllocationCreate,
  parseDeployTemplateCreate,
  parseDeployTemplatePatch,
  parseEventsBody,
  parseHeartbeat,
  parseInspectionData,
  parsePatchDocument,
} from '../../../src/api/baremetal/resource-body-schemas.ts';

/** The message of the error `f` throws. */
function refusal(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('not refused');
}

describe('heartbeat', () => {
  it('refuses with the words of the hand-written checks it replaces, in their order', () => {
    expect(refusal(() => parseHeartbeat([]))).toBe('The heartbeat body must be a JSON object with callback_url and agent_token.');
    expect(refusal(() => parseHeartbeat({ callback_url: 'http://a', colour: 1, size: 2 }))).toBe(
      'Unknown attribute(s) in heartbeat: colour, size',
    );
    expect(refusal(() => parseHeartbeat({ callback_url: null }))).toBe(
      'Invalid callback_url in heartbeat: expected a string of at most 2048 characters.',
    );
    expect(refusal(() => parseHeartbeat({ agent_token: 'x'.repeat(257) }))).toBe(
      'Invalid agent_token in heartbeat: expected a string of at most 256 characters.',
    );
    expect(refusal(() => parseHeartbeat({ agent_version: 7 }))).toBe(
      'Invalid agent_version in heartbeat: expected a string of at most 64 characters.',
    );
    expect(refusal(() => parseHeartbeat({ agent_status: 'x'.repeat(17) }))).toBe(
      'Invalid agent_status in heartbeat: expected a string of at most 16 characters.',
    );
    // Lengths first (every key), then the status' value.
    expect(refusal(() => parseHeartbeat({ agent_status: 'bogus', agent_status_message: 'x'.repeat(4097) }))).toBe(
      'Invalid agent_status_message in heartbeat: expected a string of at most 4096 characters.',
    );
    expect(refusal(() => parseHeartbeat({ agent_status: 'bogus' }))).toBe(
      'Invalid agent_status in heartbeat: expected one of start, end, error.',
    );
  });

  it('admits what the agent sends (nulls where allowed; the token check is the domain’s)', () => {
    const body = {
      callback_url: 'http://192.0.2.1:9999',
      agent_token: 't',
      agent_version: null,
      agent_status: 'end',
      agent_verify_ca: null,
    };
    expect(parseHeartbeat(body)).toBe(body);
    expect(parseHeartbeat({})).toEqual({});
    expect(Value.Check(HeartbeatBody, { callback_url: 'u', agent_status_message: null })).toBe(true);
  });
});

describe('the domain’s words first, then the schema', () => {
  it('allocations', () => {
    expect(refusal(() => parseAllocationCreate({ resource_class: 'rc', colour: 1 }))).toBe(
      "Additional properties are not allowed ('colour' was unexpected)",
    );
    expect(refusal(() => parseAllocationCreate({}))).toBe("'resource_class' is a required property");
    expect(refusal(() => parseAllocationCreate({ resource_class: 'x'.repeat(81) }))).toMatch(/^Invalid resource_class/);
    for (const body of [
      { resource_class: 'rc' },
      { node: 'n1' },
      { resource_class: 'rc', traits: ['CUSTOM_X'], candidate_nodes: ['n1'], name: 'a1', extra: null, owner: null, uuid: null },
    ]) {
      expect(parseAllocationCreate(body)).toBe(body);
      expect(Value.Check(AllocationCreateBody, body)).toBe(true);
    }
    expect(refusal(() => parsePatchDocument([]))).toBe('Invalid patch: no operations given.');
    expect(refusal(() => parsePatchDocument([{ op: 'move', path: '/a' }]))).toMatch(/only add, replace and remove/);
  });

  it('deploy templates: an empty patch is admitted (it changes nothing)', () => {
    const body = { name: 'CUSTOM_A', steps: [{ interface: 'bios', step: 's', args: {}, priority: '10' }], description: null };
    expect(parseDeployTemplateCreate(body)).toBe(body);
    expect(Value.Check(DeployTemplateCreateBody, body)).toBe(true);
    expect(refusal(() => parseDeployTemplateCreate({ name: 'CUSTOM_A' }))).toBe("Invalid deploy template: 'steps' is a required property");
    expect(parseDeployTemplatePatch([])).toEqual([]);
    expect(refusal(() => parseDeployTemplatePatch({}))).toMatch(/^Invalid patch/);
  });

  it('events and inspection data', () => {
    expect(refusal(() => parseEventsBody({ events: [] }))).toBe('Schema error for evts: [] is too short');
    const events = {
      events: [
        { event: 'network.unbind_port', port_id: '11111111-2222-3333-4444-555555555555', mac_address: '52:54:00:00:00:01', status: 'DOWN' },
      ],
    };
    expect(parseEventsBody(events)).toBe(events);
    expect(Value.Check(EventsBody, events)).toBe(true);
    expect(refusal(() => parseInspectionData({ inventory: {} }))).toBe('Invalid inspection data: inventory.cpu must be an object.');
    const data = {
      inventory: { cpu: { count: 1, architecture: 'x86_64' }, memory: { total: 1 }, interfaces: [{}], disks: [{ size: 0 }] },
      root_disk: { size: 4 },
      extra_plugin_data: [1],
    };
    expect(parseInspectionData(data)).toBe(data);
    expect(Value.Check(InspectionDataBody, data)).toBe(true);
  });
});
