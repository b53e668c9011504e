/**
 * The lab's firmware updates (DSP2046 `UpdateService.v1_8_0`, `SoftwareInventory`,
 * `TaskService`, `Task.v1_5_0`; DSP0266 §"Asynchronous operations"):
 *
 * | URI (under `/redfish/v1`)                                  | methods |
 * |------------------------------------------------------------|---------|
 * | `/UpdateService`                                            | GET (with `#UpdateService.SimpleUpdate`) |
 * | `/UpdateService/Actions/UpdateService.SimpleUpdate`         | POST `{ImageURI, TransferProtocol?, Targets: [system or manager path]}` → 202, `Location` = the task |
 * | `/UpdateService/FirmwareInventory[/{id}]`                   | GET: `BIOS-<system>` and `BMC-<system>` with their `Version` |
 * | `/TaskService`, `/TaskService/Tasks[/{id}]`                 | GET |
 *
 * The task downloads the image (http/https on a loopback address only: the lab never reaches
 * out) and reads it as a firmware package: its first line must be
 * `ESI-FIRMWARE <component> <version>` with component `BIOS` or `BMC`. The target's version
 * of that component then changes (`BiosVersion` of the system, `FirmwareVersion` of its
 * manager) and the task is `Completed`/`OK`; a download failure or a bad package ends it in
 * `Exception`/`Critical` with a message saying why. Tasks run in the background: their state
 * goes `Running` → `Completed` or `Exception`.
 */
import type { FastifyInstance } from 'fastify';
import { bodyObject, resource, sameId, type Params } from './http.ts';
import { REDFISH_ROOT, STATUS_OK, collection, managerUri, systemUri, type Json } from './render-system.ts';
import { LabError, type LabState, type SystemState } from './state.ts';

/** A firmware update task. */
export interface LabTask {
  readonly id: string;
  readonly systemId: string;
  readonly image: string;
  state: 'Running' | 'Completed' | 'Exception';
  message: string;
  readonly startTime: number;
  endTime: number | null;
}

const PACKAGE = /^ESI-FIRMWARE (BIOS|BMC) ([0-9A-Za-z._-]{1,32})\s*$/;
const MAX_IMAGE_BYTES = 64 * 1024 * 1024;

/** Firmware update tasks of the lab. */
export class LabFirmware {
  readonly #tasks = new Map<string, LabTask>();
  #next = 1;

  /** Every task, oldest first. */
  tasks(): LabTask[] {
    return [...this.#tasks.values()];
  }

  /** Task `id`, or undefined. */
  task(id: string): LabTask | undefined {
    return this.#tasks.get(id);
  }

  /**
   * Starts an update of system `s` from `image`; the returned task finishes in the background.
   * @throws LabError 400 for a URL that is not http(s) on a loopback host.
   */
  start(s: SystemState, image: string): LabTask {
    let url: URL;
    try {
      url = new URL(image);
    } catch {
      throw new LabError(
        400,
        'ActionParameterValueTypeError',
        [JSON.stringify(image), 'ImageURI', 'UpdateService.SimpleUpdate'],
        ['#/ImageURI'],
      );
    }
    if (!['http:', 'https:'].includes(url.protocol) || !isLoopback(url.hostname)) {
      throw new LabError(400, 'ActionParameterValueNotInList', [image, 'ImageURI', 'UpdateService.SimpleUpdate'], ['#/ImageURI']);
    }
    const task: LabTask = {
      id: String(this.#next++),
      systemId: s.id,
      image,
      state: 'Running',
      message: 'The task is running.',
      startTime: Date.now(),
      endTime: null,
    };
    this.#tasks.set(task.id, task);
    void this.#run(s, task);
    return task;
  }

  async #run(s: SystemState, task: LabTask): Promise<void> {
    try {
      const res = await fetch(task.image, { signal: AbortSignal.timeout(30_000) });
      if (!res.ok) throw new Error(`downloading ${task.image} failed: HTTP ${res.status}`);
      const length = Number(res.headers.get('content-length') ?? '0');
      if (length > MAX_IMAGE_BYTES) throw new Error(`the image is larger than ${MAX_IMAGE_BYTES} bytes`);
      const text = Buffer.from(await res.arrayBuffer())
        .subarray(0, 4096)
        .toString('utf8');
      const m = PACKAGE.exec(text.split('\n')[0] ?? '');
      if (m === null)
        throw new Error(`${task.image} is not a firmware package for this system (no "ESI-FIRMWARE <BIOS|BMC> <version>" header)`);
      s.firmwareVersions[m[1]!] = m[2]!;
      task.state = 'Completed';
      task.message = `${m[1]} firmware updated to version ${m[2]}.`;
    } catch (err) {
      task.state = 'Exception';
      task.message = `The firmware update failed: ${(err as Error).message}.`;
    }
    task.endTime = Date.now();
  }
}

function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h);
}

function renderTask(t: LabTask): Json {
  return {
    '@odata.type': '#Task.v1_5_0.Task',
    '@odata.id': `${REDFISH_ROOT}/TaskService/Tasks/${t.id}`,
    Id: t.id,
    Name: 'Firmware update',
    TaskState: t.state,
    TaskStatus: t.state === 'Exception' ? 'Critical' : 'OK',
    PercentComplete: t.state === 'Running' ? 50 : 100,
    StartTime: new Date(t.startTime).toISOString(),
    ...(t.endTime !== null ? { EndTime: new Date(t.endTime).toISOString() } : {}),
    Messages: [
      {
        MessageId: t.state === 'Exception' ? 'Update.1.0.ApplyFailed' : 'Update.1.0.UpdateInProgress',
        Message: t.message,
        Severity: t.state === 'Exception' ? 'Critical' : 'OK',
      },
    ],
    Payload: {
      TargetUri: `${REDFISH_ROOT}/UpdateService/Actions/UpdateService.SimpleUpdate`,
      HttpOperation: 'POST',
      JsonBody: JSON.stringify({ ImageURI: t.image, Targets: [systemUri(t.systemId)] }),
    },
  };
}

/** Registers the update and task resources (module table) on `app`. */
export function registerFirmwareRoutes(app: FastifyInstance, state: LabState, fw: LabFirmware): void {
  const R = REDFISH_ROOT;
  const action = 'UpdateService.SimpleUpdate';
  resource(app, `${R}/UpdateService`, {
    GET: () => ({
      '@odata.type': '#UpdateService.v1_8_0.UpdateService',
      '@odata.id': `${R}/UpdateService`,
      Id: 'UpdateService',
      Name: 'Update Service',
      ServiceEnabled: true,
      Status: STATUS_OK,
      FirmwareInventory: { '@odata.id': `${R}/UpdateService/FirmwareInventory` },
      Actions: {
        [`#${action}`]: { target: `${R}/UpdateService/Actions/${action}`, 'TransferProtocol@Redfish.AllowableValues': ['HTTP', 'HTTPS'] },
      },
    }),
  });
  resource(app, `${R}/UpdateService/Actions/${action}`, {
    POST: (req, reply) => {
      const body = bodyObject(req);
      if (body.ImageURI === undefined) throw new LabError(400, 'ActionParameterMissing', [action, 'ImageURI'], ['#/ImageURI']);
      if (typeof body.ImageURI !== 'string')
        throw new LabError(400, 'ActionParameterValueTypeError', [JSON.stringify(body.ImageURI), 'ImageURI', action], ['#/ImageURI']);
      if (body.TransferProtocol !== undefined && !['HTTP', 'HTTPS'].includes(body.TransferProtocol as string)) {
        throw new LabError(
          400,
          'ActionParameterValueNotInList',
          [String(body.TransferProtocol), 'TransferProtocol', action],
          ['#/TransferProtocol'],
        );
      }
      const targets = Array.isArray(body.Targets) ? (body.Targets as unknown[]) : [];
      if (targets.length !== 1 || typeof targets[0] !== 'string') {
        throw new LabError(400, 'ActionParameterMissing', [action, 'Targets'], ['#/Targets']);
      }
      const t = targets[0];
      const s = state.systems().find((x) => systemUri(x.id) === t || managerUri(x.managerId) === t);
      if (s === undefined) throw new LabError(400, 'ResourceMissingAtURI', [t], ['#/Targets']);
      const task = fw.start(s, body.ImageURI);
      const json = renderTask(task);
      void reply.code(202).header('Location', json['@odata.id']).type('application/json; charset=utf-8').send(json);
      return undefined;
    },
  });
  const inventory = (): { id: string; s: SystemState; component: string }[] =>
    state.systems().flatMap((s) => ['BIOS', 'BMC'].map((component) => ({ id: `${component}-${s.id}`, s, component })));
  resource(app, `${R}/UpdateService/FirmwareInventory`, {
    GET: () =>
      collection(
        'SoftwareInventoryCollection',
        `${R}/UpdateService/FirmwareInventory`,
        'Firmware Inventory',
        inventory().map((i) => `${R}/UpdateService/FirmwareInventory/${i.id}`),
      ),
  });
  resource(app, `${R}/UpdateService/FirmwareInventory/:fid`, {
    GET: (req, _reply, p: Params) => {
      const i = inventory().find((x) => sameId(p.fid, x.id));
      if (i === undefined) throw new LabError(404, 'ResourceMissingAtURI', [req.url]);
      return {
        '@odata.type': '#SoftwareInventory.v1_3_0.SoftwareInventory',
        '@odata.id': `${R}/UpdateService/FirmwareInventory/${i.id}`,
        Id: i.id,
        Name: `${i.component} firmware of ${i.s.id}`,
        Version: i.s.firmwareVersions[i.component] ?? '1.0.0',
        Updateable: true,
        Status: STATUS_OK,
        RelatedItem: [{ '@odata.id': i.component === 'BIOS' ? systemUri(i.s.id) : managerUri(i.s.managerId) }],
      };
    },
  });
  resource(app, `${R}/TaskService`, {
    GET: () => ({
      '@odata.type': '#TaskService.v1_1_4.TaskService',
      '@odata.id': `${R}/TaskService`,
      Id: 'TaskService',
      Name: 'Task Service',
      ServiceEnabled: true,
      Status: STATUS_OK,
      Tasks: { '@odata.id': `${R}/TaskService/Tasks` },
    }),
  });
  resource(app, `${R}/TaskService/Tasks`, {
    GET: () =>
      collection(
        'TaskCollection',
        `${R}/TaskService/Tasks`,
        'Task Collection',
        fw.tasks().map((t) => `${R}/TaskService/Tasks/${t.id}`),
      ),
  });
  resource(app, `${R}/TaskService/Tasks/:tid`, {
    GET: (req, _reply, p: Params) => {
      const t = fw.task(p.tid!);
      if (t === undefined) throw new LabError(404, 'ResourceMissingAtURI', [req.url]);
      return renderTask(t);
    },
  });
}
