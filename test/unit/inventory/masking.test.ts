/**
 * Secret masking (https://docs.openstack.org/api-ref/baremetal/#show-node-details, oslo `mask_dict_password`) and
 * lessee field redaction (https://docs.openstack.org/ironic/latest/admin/secure-rbac.html).
 */
import { describe, expect, it } from 'vitest';
import { createPolicy } from '../../../src/domain/policy/index.ts';
import {
  isSecretKey,
  maskDriverInternalInfo,
  maskInstanceInfo,
  maskPasswordText,
  maskSecrets,
  MASK,
} from '../../../src/domain/inventory/masking.ts';
import {
  REDACT_DRIVER_INFO,
  REDACT_DRIVER_INTERNAL_INFO,
  REDACT_LAST_ERROR,
  REDACT_RESERVATION,
  REDACTION_TEXT,
  redactionFor,
  shownValue,
} from '../../../src/domain/inventory/presentation.ts';
import type { Node } from '../../../src/domain/inventory/model.ts';
import { ADMIN, LESSEE, OTHER, OWNER } from '../policy/personas.ts';

describe('isSecretKey', () => {
  it.each([
    'ipmi_password',
    'redfish_password',
    'Password',
    'auth_token',
    'client_secret',
    'configdrive',
    'ssh_private_key',
    'my_passphrase',
    'agent_secret_token',
    'CHAPPASSWORD',
  ])('%s is secret', (k) => expect(isSecretKey(k)).toBe(true));
  it.each(['redfish_address', 'redfish_username', 'ipmi_port', 'deploy_kernel', 'pass', 'key'])('%s is not secret', (k) =>
    expect(isSecretKey(k)).toBe(false),
  );
});

describe('maskSecrets', () => {
  it('masks secret keys at any depth, recursing into objects under secret keys too', () => {
    const out = maskSecrets({
      redfish_address: 'http://bmc',
      redfish_password: 'p4ss',
      nested: { ipmi_password: 123, user: 'admin' },
      token: null,
      password: { inner: 'visible', secret: 's' },
      list: [{ password: 'left-alone' }],
    });
    expect(out).toEqual({
      redfish_address: 'http://bmc',
      redfish_password: MASK,
      nested: { ipmi_password: MASK, user: 'admin' },
      token: MASK,
      password: { inner: 'visible', secret: MASK },
      list: [{ password: 'left-alone' }],
    });
  });

  it('masks passwords embedded in strings', () => {
    expect(maskPasswordText('user=admin password=hunter2 x=1')).toBe(`user=admin password=${MASK} x=1`);
    expect(maskPasswordText('--password hunter2 --user a')).toBe(`--password ${MASK} --user a`);
    expect(maskPasswordText('{"admin_pass": "hunter2"}')).toBe(`{"admin_pass": "${MASK}"}`);
    expect(maskPasswordText("secret='abc def'")).toBe(`secret='${MASK}'`);
    expect(maskPasswordText('<password>abc</password>')).toBe(`<password>${MASK}</password>`);
    expect(maskPasswordText('nothing to see')).toBe('nothing to see');
    expect(maskSecrets({ cmd: 'ipmitool password=abc' })).toEqual({ cmd: `ipmitool password=${MASK}` });
  });

  it('masks instance_info configdrive and image_url, and the agent token', () => {
    expect(maskInstanceInfo({ configdrive: { user_data: 'x' }, image_url: 'http://swift/temp?sig=1', image_source: 'img' })).toEqual({
      configdrive: MASK,
      image_url: MASK,
      image_source: 'img',
    });
    expect(maskInstanceInfo({ image_url: '' })).toEqual({ image_url: '' });
    expect(maskDriverInternalInfo({ agent_secret_token: 'tok', agent_url: 'http://a' })).toEqual({
      agent_secret_token: MASK,
      agent_url: 'http://a',
    });
  });
});

describe('field redaction', () => {
  const policy = createPolicy();
  const node = {
    id: 1,
    version: 1,
    uuid: 'u',
    owner: OWNER.projectId,
    lessee: LESSEE.projectId,
    last_error: 'boom at bmc-1.internal',
    reservation: 'conductor-1',
    driver_info: { redfish_address: 'http://10.0.0.1', redfish_password: 'enc:v1:x' },
    driver_internal_info: { agent_url: 'http://10.1.1.1' },
    instance_info: { image_source: 'x' },
  } as unknown as Node;

  it('admins and owners see everything (secrets still masked); lessees get redactions', () => {
    expect(redactionFor(policy, ADMIN, node)).toBe(0);
    expect(redactionFor(policy, OWNER, node)).toBe(0);
    expect(redactionFor(policy, LESSEE, node)).toBe(
      REDACT_LAST_ERROR | REDACT_RESERVATION | REDACT_DRIVER_INTERNAL_INFO | REDACT_DRIVER_INFO,
    );
    expect(redactionFor(policy, OTHER, node)).toBe(
      REDACT_LAST_ERROR | REDACT_RESERVATION | REDACT_DRIVER_INTERNAL_INFO | REDACT_DRIVER_INFO,
    );
  });

  it('shows redaction notices and masks', () => {
    const lessee = { node, redaction: redactionFor(policy, LESSEE, node) };
    expect(shownValue(lessee, 'last_error')).toBe(REDACTION_TEXT.last_error);
    expect(shownValue(lessee, 'reservation')).toBe(REDACTION_TEXT.reservation);
    expect(shownValue(lessee, 'driver_info')).toEqual({ content: REDACTION_TEXT.driver_info });
    expect(shownValue(lessee, 'driver_internal_info')).toEqual({ content: REDACTION_TEXT.driver_internal_info });
    const owner = { node, redaction: 0 };
    expect(shownValue(owner, 'driver_info')).toEqual({ redfish_address: 'http://10.0.0.1', redfish_password: MASK });
    expect(shownValue(owner, 'last_error')).toBe('boom at bmc-1.internal');
  });
});
