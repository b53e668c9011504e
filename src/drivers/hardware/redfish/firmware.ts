/**
 * Firmware updates of the `redfish` hardware type (Ironic 21.4 `RedfishManagement.update_firmware`,
 * clean step `management.update_firmware`), through DSP2046 `UpdateService.SimpleUpdate`:
 *
 * 1. when an image has a `checksum`, the conductor downloads it and checks the digest first
 *    (MD5, SHA-256 or SHA-512, chosen by the digest's length) — a mismatch refuses the image
 *    before the BMC sees it (InvalidInputError);
 * 2. `POST` of the service's `#UpdateService.SimpleUpdate` target with `ImageURI`,
 *    `TransferProtocol` (`HTTP`/`HTTPS`) and `Targets: [<system path>]`;
 * 3. a 202 answer's `Location` is a task (monitor) that the driver polls every
 *    `pollIntervalMs` until `TaskState` is `Completed` (ok unless `TaskStatus` is `Critical`)
 *    or `Exception`/`Killed`/`Cancelled` (HardwareError with the task's first message); a
 *    200/204 answer means the BMC finished synchronously;
 * 4. after each image, `wait` seconds (Ironic's per-image `wait`).
 *
 * The result is the system's `BiosVersion` and its manager's `FirmwareVersion` afterwards.
 */
import crypto from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import { InvalidInputError } from '../../../domain/errors.ts';
import type { FirmwareImage, FirmwareInterface } from '../../../domain/hardware/firmware.ts';
import { HardwareError, type DriverNode } from '../../../domain/hardware/interfaces.ts';
import type { RedfishClient, RequestContext } from './client.ts';
import { parseRedfishDriverInfo, type RedfishDriverInfo } from './driver-info.ts';
import { invalidResponse, odataId, readSystem } from './system.ts';

type Json = Record<string, unknown>;
const RUNNING = new Set(['New', 'Starting', 'Running', 'Pending', 'Stopping', 'Suspended', 'Interrupted', 'Service']);
const ALGORITHMS: Readonly<Record<number, string>> = { 32: 'md5', 64: 'sha256', 128: 'sha512' };

/** Options of {@link RedfishFirmware}. */
export interface RedfishFirmwareOptions {
  /** Interval between task reads, milliseconds (default 200). */
  readonly pollIntervalMs?: number;
}

/** The redfish firmware interface. */
export class RedfishFirmware implements FirmwareInterface {
  readonly #client: RedfishClient;
  readonly #pollMs: number;

  constructor(client: RedfishClient, options: RedfishFirmwareOptions = {}) {
    this.#client = client;
    this.#pollMs = options.pollIntervalMs ?? 200;
  }

  /** See {@link FirmwareInterface.update}; steps in the module doc. */
  async update(node: DriverNode, images: readonly FirmwareImage[], timeoutS: number): Promise<Record<string, string>> {
    const info = parseRedfishDriverInfo(node.driverInfo);
    const ctx: RequestContext = { nodeUuid: node.uuid, operation: 'update firmware' };
    const sys = await readSystem(this.#client, info, ctx);
    const root = (await this.#client.send(info, ctx, 'GET', '/redfish/v1/')).json ?? {};
    const servicePath = odataId(root.UpdateService);
    if (servicePath === null) throw invalidResponse(info, ctx, 'a service root without an UpdateService');
    const service = (await this.#client.send(info, ctx, 'GET', servicePath)).json ?? {};
    const target = ((service.Actions as Json | undefined)?.['#UpdateService.SimpleUpdate'] as Json | undefined)?.target;
    if (typeof target !== 'string' || target === '')
      throw invalidResponse(info, ctx, 'an UpdateService without #UpdateService.SimpleUpdate');
    for (const image of images) {
      if (image.checksum !== undefined) await verifyChecksum(node.uuid, image.url, image.checksum);
      const protocol = image.url.startsWith('https:') ? 'HTTPS' : 'HTTP';
      const res = await this.#client.send(info, ctx, 'POST', target, {
        ImageURI: image.url,
        TransferProtocol: protocol,
        Targets: [sys.path],
      });
      if (res.status === 202) {
        const location = res.headers.location;
        const monitor = typeof location === 'string' ? location : odataId(res.json);
        if (monitor === null) throw invalidResponse(info, ctx, 'a 202 answer to SimpleUpdate without a task Location');
        await this.#waitTask(info, ctx, monitor, image.url, timeoutS * 1000);
      }
      if (image.wait !== undefined && image.wait > 0) await sleep(image.wait * 1000);
    }
    const after = await readSystem(this.#client, info, ctx, sys.path);
    const versions: Record<string, string> = {};
    if (typeof after.json.BiosVersion === 'string') versions.bios = after.json.BiosVersion;
    const manager = odataId(((after.json.Links as Json | undefined)?.ManagedBy as unknown[] | undefined)?.[0]);
    if (manager !== null) {
      const m = (await this.#client.send(info, ctx, 'GET', manager)).json ?? {};
      if (typeof m.FirmwareVersion === 'string') versions.bmc = m.FirmwareVersion;
    }
    return versions;
  }

  /** Polls task `monitor` until it ends; throws unless it completed without a critical status. */
  async #waitTask(info: RedfishDriverInfo, ctx: RequestContext, monitor: string, url: string, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const res = await this.#client.send(info, ctx, 'GET', monitor);
      const task = res.json ?? {};
      const state = typeof task.TaskState === 'string' ? task.TaskState : res.status === 202 ? 'Running' : 'Completed';
      if (!RUNNING.has(state)) {
        const messages = Array.isArray(task.Messages) ? (task.Messages as Json[]) : [];
        const text = messages
          .map((m) => m.Message)
          .filter((m): m is string => typeof m === 'string')
          .join(' ');
        if (state === 'Completed' && task.TaskStatus !== 'Critical') return;
        throw new HardwareError(
          `Redfish BMC at ${info.address} failed the firmware update of node ${ctx.nodeUuid} from ${url}: task ${state}${text ? ` (${text})` : ''}`,
          {
            reason: 'refused',
            nodeUuid: ctx.nodeUuid,
            operation: ctx.operation,
          },
        );
      }
      if (Date.now() >= deadline) {
        throw new HardwareError(
          `Timed out after ${timeoutMs / 1000} s waiting for the firmware update of node ${ctx.nodeUuid} from ${url} (task still ${state}).`,
          {
            reason: 'timeout',
            nodeUuid: ctx.nodeUuid,
            operation: ctx.operation,
          },
        );
      }
      await sleep(this.#pollMs);
    }
  }
}

/**
 * Downloads `url` and compares its digest with `checksum`.
 * @throws InvalidInputError on a mismatch, an unknown digest length or a failed download.
 */
async function verifyChecksum(nodeUuid: string, url: string, checksum: string): Promise<void> {
  const algorithm = ALGORITHMS[checksum.length];
  if (algorithm === undefined) throw new InvalidInputError(`The checksum of firmware image ${url} is neither MD5, SHA-256 nor SHA-512.`);
  const hash = crypto.createHash(algorithm);
  try {
    const res = await request(url, { method: 'GET', signal: AbortSignal.timeout(600_000) });
    if (res.statusCode !== 200) {
      await res.body.dump();
      throw new Error(`HTTP ${res.statusCode}`);
    }
    for await (const chunk of res.body) hash.update(chunk as Buffer);
  } catch (err) {
    throw new InvalidInputError(
      `Cannot download firmware image ${url} for node ${nodeUuid} to check its checksum: ${(err as Error).message}.`,
    );
  }
  const digest = hash.digest('hex');
  if (digest !== checksum.toLowerCase()) {
    throw new InvalidInputError(
      `Firmware image ${url} for node ${nodeUuid} has ${algorithm} ${digest}, not the expected ${checksum.toLowerCase()}; it was not sent to the BMC.`,
    );
  }
}
