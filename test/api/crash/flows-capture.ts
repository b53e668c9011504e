/**
 * The crash suite's capture flow (issue 23): a lab node that runs esi's deploy agent
 * (`esi agent`, src/lab/agents.ts) is deployed with an OS image and a config drive, then
 * captured into a new `queued` image (src/domain/deploy/capture.ts), again and again, while the
 * suite kills esi. The flow picks up wherever a kill left the node — enrolled, cleaning, clean or
 * deploy or service failed, deployed — so each round goes on from the records as they were
 * recovered: a `service failed` node (a capture cut by a restart) is captured again into a new
 * image, which is what a lessee would do.
 */
import type { Answer } from './cloud.ts';
import { ok, provision, Refused, until, type FlowContext } from './flow-kit.ts';

/** What the capture flow needs of its lab: the node to drive and the image it deploys. */
export interface CaptureTarget {
  /** The uuid of the agent node (redfish, `deploy_interface` `direct`, a port with its MAC). */
  readonly node: string;
  /** The id of an active OS image the node is deployed with. */
  readonly image: string;
}

/** How long one agent stage (clean, deploy, capture) may take before the flow looks again, ms. */
const STAGE_MS = 90_000;

/** The node as admin. */
async function read(c: FlowContext, uuid: string): Promise<any> {
  return ok(await c.cloud.bm('GET', `/nodes/${uuid}`), 'read node');
}

/** Wait until the node leaves its transient state (and its lock); @returns the node */
async function settled(c: FlowContext, uuid: string): Promise<any> {
  return until(
    () => read(c, uuid),
    (n) =>
      n.reservation === null && n.target_power_state === null && (n.target_provision_state === null || /failed$/.test(n.provision_state)),
    STAGE_MS,
  );
}

/** The status of image `id`. */
async function imageStatus(c: FlowContext, id: string): Promise<string> {
  return ok(await c.cloud.call('GET', `/image/v2/images/${id}`), 'read image').status as string;
}

/** Raise {@link Refused} unless the answer is 2xx (the loop notes it and starts again). */
function accepted(a: Answer, what: string): void {
  ok(a, what);
}

/**
 * One pass of the capture flow on `target`: bring the node to `active` from wherever it is, then
 * capture it into a new queued qcow2 or raw image and wait for the capture's outcome; the image
 * must then be `active` when the node is back to `active`, and `queued` when the capture failed.
 * @throws Refused on a refusal or an outcome the flow did not expect (then the loop retries),
 *   ProcessGone once esi is killed
 */
export async function captureFlow(c: FlowContext, target: CaptureTarget): Promise<void> {
  const uuid = target.node;
  let n = await settled(c, uuid);
  if (n.maintenance) {
    c.mark('unset maintenance');
    accepted(await c.cloud.bm('DELETE', `/nodes/${uuid}/maintenance`), 'unset maintenance');
  }
  switch (n.provision_state) {
    case 'enroll':
    case 'clean failed':
      c.mark('manage');
      await provision(c, uuid, 'manage', 'manageable');
      return;
    case 'manageable':
      c.mark('provide (cleaning with the agent)');
      await provisionSlow(c, uuid, 'provide', 'available');
      return;
    case 'deploy failed':
    case 'error':
      c.mark('undeploy');
      await provisionSlow(c, uuid, 'deleted', 'available');
      return;
    case 'available':
      accepted(
        await c.cloud.bm('PATCH', `/nodes/${uuid}`, [{ op: 'add', path: '/instance_info/image_source', value: target.image }]),
        'image_source',
      );
      c.mark('deploy (agent)');
      await provisionSlow(c, uuid, 'active', 'active', { configdrive: { meta_data: { hostname: 'crash-capture' }, user_data: 'secret' } });
      return;
    case 'active':
    case 'service failed':
      break;
    default:
      throw new Refused(`capture node is ${n.provision_state}`);
  }
  const format = c.round % 2 === 0 ? 'qcow2' : 'raw';
  const img = ok(
    await c.cloud.call('POST', '/image/v2/images', { name: `crash-${c.round}-capture`, disk_format: format, container_format: 'bare' }),
    'image',
  );
  c.mark(`capture (${n.provision_state})`);
  accepted(await c.cloud.bm('POST', `/nodes/${uuid}/capture`, { image_id: img.id }), 'capture');
  n = await settled(c, uuid);
  const status = await imageStatus(c, img.id as string);
  c.mark(`captured: ${n.provision_state}, image ${status}`);
  if (n.provision_state === 'active' && status !== 'active')
    throw new Error(`node ${uuid} is active again after its capture but image ${img.id} is ${status}`);
  if (n.provision_state === 'service failed' && status !== 'queued')
    throw new Error(`the capture of node ${uuid} failed (${n.last_error}) but image ${img.id} is ${status}`);
}

/** {@link provision} with an agent stage's time. */
async function provisionSlow(c: FlowContext, uuid: string, verb: string, want: string, body: Record<string, unknown> = {}): Promise<void> {
  ok(await c.cloud.bm('PUT', `/nodes/${uuid}/states/provision`, { target: verb, ...body }), verb);
  await until(
    async () => (await read(c, uuid)).provision_state as string,
    (s) => s === want || s.endsWith('failed'),
    STAGE_MS,
  );
}
