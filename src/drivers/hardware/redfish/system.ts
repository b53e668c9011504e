/**
 * Finding and reading a node's ComputerSystem resource (DSP2046 `ComputerSystem`) on its BMC,
 * shared by the redfish power and management interfaces.
 *
 * As in Ironic 21.4 (`redfish_utils.get_system`): `redfish_system_id` names the system; when
 * it is absent the BMC's system collection must hold exactly one member, which is used.
 */
import { InvalidInputError } from '../../../domain/errors.ts';
import { HardwareError } from '../../../domain/hardware/interfaces.ts';
import type { RedfishClient, RequestContext } from './client.ts';
import type { RedfishDriverInfo } from './driver-info.ts';

/** A ComputerSystem as read from the BMC: its path, JSON body and `ETag` (if any). */
export interface SystemResource {
  readonly path: string;
  readonly json: Record<string, unknown>;
  readonly etag: string | null;
}

/**
 * The path of the node's ComputerSystem.
 *
 * @throws InvalidInputError when `redfish_system_id` is absent and the BMC does not have
 *   exactly one system.
 * @throws HardwareError when the BMC cannot be reached or refuses.
 */
export async function systemPath(client: RedfishClient, info: RedfishDriverInfo, ctx: RequestContext): Promise<string> {
  if (info.systemId !== null) return info.systemId;
  const root = await client.send(info, ctx, 'GET', '/redfish/v1/');
  const systems = odataId(root.json?.Systems) ?? '/redfish/v1/Systems';
  const coll = await client.send(info, ctx, 'GET', systems);
  const members = Array.isArray(coll.json?.Members) ? (coll.json.Members as unknown[]) : [];
  const first = members.length === 1 ? odataId(members[0]) : null;
  if (first === null) {
    throw new InvalidInputError(
      `redfish_system_id is required for node ${ctx.nodeUuid}: the Redfish BMC at ${info.address} has ${members.length} systems.`,
      'InvalidParameterValue',
    );
  }
  return first;
}

/**
 * Reads the node's ComputerSystem (`GET <system path>`).
 *
 * @throws HardwareError when the BMC cannot be reached, refuses, or answers no JSON object.
 */
export async function readSystem(
  client: RedfishClient,
  info: RedfishDriverInfo,
  ctx: RequestContext,
  path?: string,
): Promise<SystemResource> {
  const p = path ?? (await systemPath(client, info, ctx));
  const res = await client.send(info, ctx, 'GET', p);
  if (res.json === null) throw invalidResponse(info, ctx, 'an empty ComputerSystem');
  const etag = res.headers.etag;
  return { path: p, json: res.json, etag: typeof etag === 'string' ? etag : null };
}

/** A HardwareError for a BMC answer this driver cannot use; `what` describes it. */
export function invalidResponse(info: RedfishDriverInfo, ctx: RequestContext, what: string): HardwareError {
  return new HardwareError(`Redfish BMC at ${info.address} sent ${what} for ${ctx.operation} of node ${ctx.nodeUuid}.`, {
    reason: 'invalid-response',
    nodeUuid: ctx.nodeUuid,
    operation: ctx.operation,
  });
}

/** The `@odata.id` of a Redfish reference, or null. */
export function odataId(v: unknown): string | null {
  const id = (v as { '@odata.id'?: unknown } | null | undefined)?.['@odata.id'];
  return typeof id === 'string' && id !== '' ? id : null;
}
