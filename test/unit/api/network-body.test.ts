/**
 * The Neutron body parser (src/api/network/body.ts): bodies the resource schemas admit come back
 * typed and unchanged; each kind of refusal is an InvalidInputError in Neutron's words.
 */
import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../../src/domain/errors.ts';
import { parseNeutronBody } from '../../../src/api/network/body.ts';
import { NETWORK, PORT, SUBNET, TRUNK } from '../../../src/api/network/schemas.ts';

const refusal = (f: () => unknown): string => {
  try {
    f();
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidInputError);
    return (err as Error).message;
  }
  throw new Error('not refused');
};

describe('parseNeutronBody', () => {
  it('returns the attributes inside the wrapper, as given', () => {
    const attrs = { name: 'n', admin_state_up: 'True', mtu: '1400', 'provider:segmentation_id': 101, shared: 0 };
    const body = parseNeutronBody(NETWORK, 'POST', { network: attrs });
    expect(body).toEqual(attrs);
    expect(body.name).toBe('n');
    expect(parseNeutronBody(SUBNET, 'PUT', { subnet: { enable_dhcp: false, dns_nameservers: ['10.0.0.1'] } })).toEqual({
      enable_dhcp: false,
      dns_nameservers: ['10.0.0.1'],
    });
  });

  it('keeps the wrapper messages of unwrap', () => {
    expect(refusal(() => parseNeutronBody(NETWORK, 'POST', { networks: [{}] }))).toMatch(/^Bulk networks operations are not supported/);
    expect(refusal(() => parseNeutronBody(NETWORK, 'POST', { port: {} }))).toBe("Unable to find 'network' in request body");
    expect(refusal(() => parseNeutronBody(NETWORK, 'POST', []))).toMatch(/^Resource body required/);
  });

  it('refuses keys as Neutron does: not settable by method, then unknown', () => {
    expect(refusal(() => parseNeutronBody(NETWORK, 'POST', { network: { status: 'DOWN' } }))).toBe(
      "Attribute 'status' not allowed in POST",
    );
    expect(refusal(() => parseNeutronBody(NETWORK, 'PUT', { network: { project_id: 'p' } }))).toBe(
      "Attribute 'project_id' not allowed in PUT",
    );
    expect(refusal(() => parseNeutronBody(PORT, 'POST', { port: { network_id: 'x', colour: 1, size: 2 } }))).toBe(
      "Unrecognized attribute(s) 'colour, size'",
    );
    expect(refusal(() => parseNeutronBody(TRUNK, 'POST', { trunk: 'x' }))).toBe(
      'Invalid input for trunk. Reason: the trunk must be a JSON object.',
    );
  });

  it('words shape refusals with the attribute and its kind', () => {
    const net = (attrs: Record<string, unknown>): string => refusal(() => parseNeutronBody(NETWORK, 'POST', { network: attrs }));
    expect(net({ name: 7 })).toBe("Invalid input for name. Reason: '7' is not a valid string.");
    expect(net({ name: 'x'.repeat(256) })).toBe(`Invalid input for name. Reason: '${'x'.repeat(256)}' exceeds maximum length of 255.`);
    expect(net({ mtu: 'big' })).toBe("Invalid input for mtu. Reason: 'big' is not an integer.");
    expect(net({ shared: 2 })).toBe("Invalid input for shared. Reason: '2' is not a valid boolean value.");
    expect(refusal(() => parseNeutronBody(PORT, 'POST', { port: { name: 'p' } }))).toBe(
      "Failed to parse request. Required attribute 'network_id' not specified",
    );
    expect(refusal(() => parseNeutronBody(PORT, 'POST', { port: { network_id: 42 } }))).toBe(
      "Invalid input for network_id. Reason: '42' is not a valid UUID.",
    );
    expect(refusal(() => parseNeutronBody(PORT, 'POST', { port: { network_id: 'n', 'binding:profile': [] } }))).toBe(
      "Invalid input for binding:profile. Reason: '[]' is not a dictionary.",
    );
    expect(refusal(() => parseNeutronBody(PORT, 'POST', { port: { network_id: 'n', fixed_ips: [{ subnet_id: 's', mac: 1 }] } }))).toMatch(
      /^Invalid input for fixed_ips\. Reason: '\[\{"subnet_id":"s","mac":1\}\]' is not valid: .* at 0\/mac\.$/,
    );
  });
});
