/**
 * `esi node capture <node> --name <image>`: make an image of a provisioned node you hold (ESI's
 * design document, "Create image from a leased, provisioned node"; docs/provisioning.md): creates a
 * private image in the image service (`POST /image/v2/images`, `container_format` bare,
 * `disk_format` qcow2 or raw), asks the node to capture its disk into it
 * (`POST /baremetal/v1/nodes/{node}/capture`, an esi addition), and with `--wait` follows the
 * capture (booting the deploy agent, converting, uploading bytes) until the image is `active` and
 * the node runs its instance again. If the capture request is refused, the image just created is
 * deleted again.
 */
import type { Command } from 'commander';
import { addOutputOptions, printShow, type OutputOptions } from '../output.ts';
import { ProgressView } from '../progress.ts';
import { CliError, withSession, type Session } from '../session.ts';
import { bm, getNode } from './node-provision.ts';
import { capturePhase } from '../../domain/deploy/phases.ts';

interface CaptureOptions extends OutputOptions {
  name: string;
  diskFormat: string;
  wait?: true | string;
}

/** Poll node and image until the image is active and the node is active again. */
async function waitCapture(s: Session, uuid: string, subject: string, imageId: string, timeoutS: number): Promise<Record<string, any>> {
  const view = new ProgressView(subject);
  const deadline = timeoutS > 0 ? Date.now() + timeoutS * 1000 : Infinity;
  try {
    for (;;) {
      const [n, image] = await Promise.all([bm(s, 'GET', `/nodes/${uuid}`), s.call('image', 'GET', `/v2/images/${imageId}`)]);
      if (n.provision_state === 'service failed' || n.provision_state === 'error') {
        const why =
          typeof n.last_error === 'string' && !n.last_error.startsWith('** ')
            ? n.last_error
            : 'the reason is shown to the node owner and admins (last_error)';
        throw new CliError(`the capture of node ${subject} failed (${n.provision_state}): ${why}`);
      }
      if (image.status === 'active' && n.provision_state === 'active') {
        view.finish();
        return image;
      }
      view.update(capturePhase(n));
      if (Date.now() > deadline)
        throw new CliError(
          `the capture of node ${subject} did not finish within ${timeoutS} s (node ${n.provision_state}, image ${image.status}).`,
        );
      await new Promise((r) => setTimeout(r, 500));
    }
  } finally {
    view.stop();
  }
}

/** Register `node capture` on the `node` command group. */
export function registerCaptureCommand(node: Command): void {
  addOutputOptions(
    node
      .command('capture')
      .description('create an image (private to your project) from the disk of a provisioned node you hold')
      .argument('<node>', 'node UUID or name')
      .requiredOption('--name <image>', 'name of the new image')
      .option('--disk-format <format>', 'qcow2 (default) or raw', 'qcow2')
      .option('--wait [seconds]', 'wait until the image is active, showing progress (optional timeout)'),
  ).action(async (ident: string, o: CaptureOptions) => {
    if (o.diskFormat !== 'qcow2' && o.diskFormat !== 'raw')
      throw new CliError(`--disk-format must be qcow2 or raw (got "${o.diskFormat}").`);
    const timeout = o.wait === undefined ? null : o.wait === true ? 0 : Number(o.wait);
    if (timeout !== null && !(Number.isInteger(timeout) && timeout >= 0))
      throw new CliError(`--wait takes a whole number of seconds (got "${String(o.wait)}").`);
    await withSession(async (s) => {
      const n = await getNode(s, ident);
      if (n.provision_state !== 'active')
        throw new CliError(`node ${ident} is ${n.provision_state}; only an active (provisioned) node can be captured.`);
      const image = await s.call('image', 'POST', '/v2/images', {
        body: { name: o.name, disk_format: o.diskFormat, container_format: 'bare', visibility: 'private' },
      });
      try {
        await bm(s, 'POST', `/nodes/${n.uuid}/capture`, { image_id: image.id });
      } catch (err) {
        await s.call('image', 'DELETE', `/v2/images/${image.id}`).catch(() => undefined);
        throw err;
      }
      const shown =
        timeout !== null
          ? await waitCapture(s, n.uuid, n.name ?? n.uuid, image.id, timeout)
          : await s.call('image', 'GET', `/v2/images/${image.id}`);
      printShow(
        Object.entries({
          id: shown.id,
          name: shown.name,
          status: shown.status,
          disk_format: shown.disk_format,
          size: shown.size,
          virtual_size: shown.virtual_size,
          os_hash_algo: shown.os_hash_algo,
          os_hash_value: shown.os_hash_value,
          node: n.name ?? n.uuid,
        }),
        o,
      );
    });
  });
}
