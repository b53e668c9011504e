/**
 * One QEMU-backed lab system: its BMC's actions carried out on a real VM, as sushy-tools' libvirt
 * driver does for Ironic's CI (`sushy_tools/emulator/resources/systems/libvirtdriver.py`:
 * `set_power_state`, `set_boot_device`, virtual media), and the lab's model ({@link LabState})
 * kept equal to what the VM does.
 *
 * | Redfish                              | the VM                                                            |
 * |--------------------------------------|-------------------------------------------------------------------|
 * | `PowerState`                         | On while the QEMU process runs                                    |
 * | Reset `On`, `ForceOn`                | start QEMU (paused; the boot is recorded, then `cont`)            |
 * | Reset `ForceOff`                     | QMP `quit`, SIGKILL after 5 s                                     |
 * | Reset `GracefulShutdown`, `PushPowerButton` (on) | QMP `system_powerdown` (ACPI power button); forced off after the graceful timeout |
 * | Reset `ForceRestart`, `GracefulRestart` | UEFI: boot order set (`qom-set` of `bootindex`), QMP `system_reset`; Legacy or a firmware change: a new QEMU process |
 * | Reset `Nmi`                          | QMP `inject-nmi`                                                   |
 * | guest power-off / reset              | QEMU pauses (`-action`, ./command.ts): the process ends → Off / the lab reboots it with the boot override |
 * | `BootSourceOverrideMode`             | UEFI: OVMF with this VM's variable store; Legacy: SeaBIOS          |
 * | `InsertMedia` / `EjectMedia`         | download (./media.ts) into `media/`, QMP `blockdev-change-medium` / `eject` while running |
 * | serial console                       | QEMU's stdio ↔ {@link LabSerialPorts}                             |
 *
 * Actions on one system run one at a time, in order of arrival.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { LabSerialPorts } from '../serial.ts';
import type { LabState, ResetType } from '../state.ts';
import { BOOT_DEVICE_PATHS, bootOrder, qemuArgs, wrapCommand, type BootOrder } from './command.ts';
import { nodeFiles, prepareDisk, type QemuNodeFiles } from './files.ts';
import { downloadIso, mediaLabError } from './media.ts';
import type { QemuFirmware, QemuSettings } from './options.ts';
import { QemuProcess, type QemuExit } from './process.ts';
import type { QmpEvent } from './qmp.ts';

/** What a node shares with the other nodes of its lab. */
export interface QemuNodeContext {
  readonly state: LabState;
  readonly serial: LabSerialPorts;
  readonly settings: QemuSettings;
  /** True when /dev/kvm opens. */
  readonly kvm: boolean;
  /** Firmware modes KVM failed to run on this host (filled in at run time, `accel: auto`). */
  readonly kvmBroken: Set<QemuFirmware>;
  /** Run QEMU under `setpriv --pdeathsig KILL`. */
  readonly pdeathsig: boolean;
  /** The network namespace QEMU runs in (its tap is there), or null. */
  readonly netns: string | null;
}

/** The VM behind one lab system (see the module documentation). */
export class QemuNode {
  readonly files: QemuNodeFiles;
  #proc: QemuProcess | null = null;
  #firmware: QemuFirmware | null = null;
  #accel: 'kvm' | 'tcg' | null = null;
  #order: BootOrder | null = null;
  #restarting = false;
  #closed = false;
  #queue: Promise<unknown> = Promise.resolve();
  #graceTimer: NodeJS.Timeout | null = null;
  #media: string | null = null;
  #mediaSeq = 0;
  #out: Buffer[] = [];
  #outTimer: NodeJS.Timeout | null = null;

  /**
   * @param tap the node's switch port (a tap in `ctx.netns`), or null for a NIC on a hub of its own
   */
  constructor(
    private readonly ctx: QemuNodeContext,
    readonly id: string,
    private readonly tap: string | null,
  ) {
    this.files = nodeFiles(ctx.settings.dataDir, id);
    // The BMC starts with an empty CD drive: media a previous lab fetched are stale.
    fs.rmSync(this.files.media, { recursive: true, force: true });
    ctx.serial.setInputSink(id, (data) => this.#proc?.write(data));
  }

  /** The QEMU process id while the VM runs, else null. */
  get pid(): number | null {
    return this.#proc?.pid ?? null;
  }

  /** The accelerator of the running VM, or null. */
  get accel(): 'kvm' | 'tcg' | null {
    return this.#proc === null ? null : this.#accel;
  }

  /** Carry out a reset (see the table of the module documentation); resolves once done. */
  reset(type: ResetType): Promise<void> {
    return this.#serialised(() => this.#reset(type));
  }

  /**
   * Download `url` and put it in the CD drive (replacing what was there).
   * @throws LabError 400 (`CouldNotEstablishConnection`, `ActionParameterValueFormatError`, `ActionParameterValueError`); nothing changed then
   */
  insertMedia(url: string): Promise<void> {
    return this.#serialised(async () => {
      fs.mkdirSync(this.files.media, { recursive: true });
      const file = path.join(this.files.media, `cd-${Date.now()}-${++this.#mediaSeq}.iso`);
      try {
        await downloadIso(url, file, this.ctx.settings.mediaMaxBytes);
      } catch (err) {
        throw mediaLabError(err, url);
      }
      try {
        if (this.#proc !== null)
          await this.#proc.qmp.execute('blockdev-change-medium', { id: 'cdrom', filename: file, format: 'raw', force: true });
      } catch (err) {
        fs.rmSync(file, { force: true });
        throw err;
      }
      if (this.#media !== null) fs.rmSync(this.#media, { force: true });
      this.#media = file;
      this.#note(`virtual media: ${url} inserted (${fs.statSync(file).size} bytes)`);
    });
  }

  /** Take the medium out of the CD drive and delete its file. */
  ejectMedia(): Promise<void> {
    return this.#serialised(async () => {
      if (this.#proc !== null) await this.#proc.qmp.execute('eject', { id: 'cdrom', force: true });
      if (this.#media !== null) fs.rmSync(this.#media, { force: true });
      this.#media = null;
    });
  }

  /** End the VM (lab shutdown): QMP quit, SIGKILL after `graceMs`. The model is left as it is. */
  async close(graceMs = 3000): Promise<void> {
    this.#closed = true;
    this.#clearGrace();
    this.ctx.serial.setInputSink(this.id, null);
    await this.#proc?.stop(graceMs);
    this.#flush();
  }

  #serialised<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.#queue.then(fn, fn);
    this.#queue = next.catch(() => undefined);
    return next;
  }

  async #reset(type: ResetType): Promise<void> {
    const on = this.#proc !== null;
    switch (type) {
      case 'On':
      case 'ForceOn':
        if (!on) await this.#powerOn();
        return;
      case 'ForceOff':
        await this.#forceOff();
        return;
      case 'GracefulShutdown':
        if (on) await this.#powerButton();
        return;
      case 'PushPowerButton':
        if (on) await this.#powerButton();
        else await this.#powerOn();
        return;
      case 'GracefulRestart':
      case 'ForceRestart':
        if (on) await this.#reboot();
        else await this.#powerOn();
        return;
      case 'Nmi':
        if (on) await this.#proc!.qmp.execute('inject-nmi');
        return;
    }
  }

  /** Start QEMU for the pending boot, record power-on and the boot, and let the CPUs run. */
  async #powerOn(): Promise<void> {
    const boot = this.ctx.state.pendingBoot(this.id);
    await this.#start(boot.mode === 'UEFI' ? 'uefi' : 'bios', bootOrder(boot.override));
    this.ctx.state.setPowerState(this.id, 'On');
    await this.#proc!.qmp.execute('cont');
  }

  async #forceOff(): Promise<void> {
    this.#clearGrace();
    await this.#proc?.stop(5000);
  }

  /** The ACPI power button; the VM is forced off if it still runs after the graceful timeout. */
  async #powerButton(): Promise<void> {
    const proc = this.#proc!;
    await proc.qmp.execute('system_powerdown');
    this.#clearGrace();
    this.#graceTimer = setTimeout(() => {
      this.#graceTimer = null;
      if (this.#proc !== proc) return;
      this.#note(`no power-off after ${this.ctx.settings.gracefulShutdownTimeoutS} s of ACPI power button: forcing it off`);
      void this.#serialised(() => this.#forceOff());
    }, this.ctx.settings.gracefulShutdownTimeoutS * 1000);
    this.#graceTimer.unref();
  }

  /**
   * A reset of a running (or, after a guest reset, paused) VM with the pending boot. UEFI: the
   * boot order set with `qom-set` and QMP `system_reset` (`-action reboot=shutdown` is lifted
   * around it). Legacy, or a change of firmware or accelerator: a new QEMU process — SeaBIOS
   * answers a warm reset by resetting the machine once or twice more itself (it re-runs POST
   * only from a cold start), and each of those would count as a boot and use up a `Once` override.
   */
  async #reboot(): Promise<void> {
    const proc = this.#proc!;
    const boot = this.ctx.state.pendingBoot(this.id);
    const firmware = boot.mode === 'UEFI' ? 'uefi' : 'bios';
    const order = bootOrder(boot.override);
    if (firmware === 'bios' || firmware !== this.#firmware || this.#accelFor(firmware) !== this.#accel) {
      this.#restarting = true;
      try {
        await proc.stop(5000);
      } finally {
        this.#restarting = false;
      }
      await this.#start(firmware, order);
      this.ctx.state.recordBoot(this.id);
      await this.#proc!.qmp.execute('cont');
      return;
    }
    await this.#setOrder(proc, order);
    this.ctx.state.recordBoot(this.id);
    const reset = new Promise<void>((resolve) => {
      const off = proc.qmp.onEvent((e) => {
        if (e.event === 'RESET') {
          off();
          resolve();
        }
      });
      void proc.exited.then(() => resolve());
    });
    await proc.qmp.execute('set-action', { reboot: 'reset' });
    await proc.qmp.execute('system_reset');
    await proc.qmp.execute('set-action', { reboot: 'shutdown' });
    await reset;
    if (proc.exit !== null) return;
    const status = await proc.qmp.execute<{ status: string }>('query-status');
    if (status.status !== 'running') await proc.qmp.execute('cont');
  }

  async #setOrder(proc: QemuProcess, order: BootOrder): Promise<void> {
    const current = this.#order;
    if (current !== null && current.disk === order.disk && current.cd === order.cd && current.net === order.net) return;
    const devices = Object.keys(BOOT_DEVICE_PATHS) as Array<keyof BootOrder>;
    // Two devices cannot hold one bootindex at once: clear them all first.
    for (const d of devices) await proc.qmp.execute('qom-set', { path: BOOT_DEVICE_PATHS[d], property: 'bootindex', value: -1 });
    for (const d of devices) await proc.qmp.execute('qom-set', { path: BOOT_DEVICE_PATHS[d], property: 'bootindex', value: order[d] });
    this.#order = order;
  }

  #accelFor(firmware: QemuFirmware): 'kvm' | 'tcg' {
    const a = this.ctx.settings.accel;
    if (a !== 'auto') return a;
    return this.ctx.kvm && !this.ctx.kvmBroken.has(firmware) ? 'kvm' : 'tcg';
  }

  /** Prepare the disk and variable store, and start a paused QEMU. */
  async #start(firmware: QemuFirmware, order: BootOrder): Promise<void> {
    const s = this.ctx.settings;
    const sys = this.ctx.state.system(this.id);
    fs.mkdirSync(this.files.dir, { recursive: true });
    await prepareDisk(this.files.disk, s.diskGiB);
    if (firmware === 'uefi' && !fs.existsSync(this.files.vars)) fs.copyFileSync(s.ovmf.vars, this.files.vars);
    const accel = this.#accelFor(firmware);
    const args = qemuArgs({
      binary: s.qemuBinary,
      id: this.id,
      accel,
      firmware,
      ovmfCode: s.ovmf.code,
      ovmfVars: this.files.vars,
      memoryMiB: s.memoryMiB,
      vcpus: s.vcpus,
      uuid: sys.uuid,
      mac: sys.mac,
      smbios: sys.machine.system,
      diskSerial: sys.machine.disks[0]?.serial ?? sys.id,
      disk: this.files.disk,
      cdImage: this.#media,
      qmpSocket: this.files.qmp,
      pidfile: this.files.pidfile,
      tap: this.tap,
      order,
    });
    const command = wrapCommand(s.qemuBinary, args, { netns: this.tap === null ? null : this.ctx.netns, pdeathsig: this.ctx.pdeathsig });
    let started: QemuProcess | null = null;
    const proc = await QemuProcess.start({
      command,
      qmpSocket: this.files.qmp,
      pidfile: this.files.pidfile,
      onOutput: (chunk) => this.#output(chunk),
      onExit: (exit) => {
        if (started !== null) this.#exited(started, exit);
      },
    });
    started = proc;
    if (this.#closed || proc.exit !== null) {
      // The lab closed while this VM was starting, or QEMU ended at once.
      await proc.stop(1000);
      throw new Error(`${this.id}: ${this.#closed ? 'the lab is closing' : `QEMU exited at once: ${proc.stderr().trim()}`}`);
    }
    this.#proc = proc;
    this.#firmware = firmware;
    this.#accel = accel;
    this.#order = order;
    proc.qmp.onEvent((e) => this.#event(proc, e));
    this.#note(`QEMU started (pid ${proc.pid}, ${accel}, ${firmware === 'uefi' ? 'OVMF' : 'SeaBIOS'})`);
  }

  /** QMP events of the running process: guest power-off and reset (`-action … pause`), KVM failures. */
  #event(proc: QemuProcess, e: QmpEvent): void {
    if (this.#closed || this.#proc !== proc) return;
    if (e.event === 'SHUTDOWN' && e.data.guest === true) {
      if (e.data.reason === 'guest-reset') {
        void this.#serialised(async () => {
          if (this.#proc === proc) await this.#reboot();
        }).catch((err: unknown) => this.#note(`the reboot failed: ${(err as Error).message}`));
      } else {
        this.#note(`the guest powered off (${String(e.data.reason)})`);
        void this.#serialised(async () => {
          if (this.#proc === proc) await proc.stop(5000);
        });
      }
    } else if (e.event === 'STOP') {
      void proc.qmp.execute<{ status: string }>('query-status').then(
        (st) => {
          if (st.status === 'internal-error') this.#internalError(proc);
        },
        () => undefined,
      );
    }
  }

  /** The accelerator stopped the VM (a KVM internal error): retry the boot with TCG when allowed, else power off. */
  #internalError(proc: QemuProcess): void {
    const firmware = this.#firmware!;
    const retry = this.ctx.settings.accel === 'auto' && this.#accel === 'kvm';
    this.#note(
      `the VM stopped on an internal error of ${this.#accel}${retry ? `; KVM cannot run ${firmware} firmware here, booting again with TCG` : ''}`,
    );
    if (retry) this.ctx.kvmBroken.add(firmware);
    void this.#serialised(async () => {
      if (this.#proc !== proc) return;
      if (!retry) {
        await proc.stop(5000);
        return;
      }
      this.#restarting = true;
      try {
        await proc.stop(5000);
      } finally {
        this.#restarting = false;
      }
      await this.#start(firmware, this.#order ?? bootOrder(null));
      await this.#proc.qmp.execute('cont');
    });
  }

  #exited(proc: QemuProcess, exit: QemuExit): void {
    if (this.#proc !== proc) return;
    this.#proc = null;
    this.#clearGrace();
    if (this.#restarting || this.#closed) return;
    const how = exit.signal !== null ? `signal ${exit.signal}` : `code ${exit.code}`;
    const err = exit.code !== 0 && exit.signal !== 'SIGKILL' ? `: ${proc.stderr().trim().split('\n').slice(-3).join(' / ')}` : '';
    this.#note(`QEMU exited (${how})${err}`);
    this.ctx.state.setPowerState(this.id, 'Off');
  }

  /**
   * Serial output, passed on in batches: an emulated UART delivers a byte at a time, and each
   * print is a file append and a websocket frame.
   */
  #output(chunk: Buffer): void {
    this.#out.push(chunk);
    this.#outTimer ??= setTimeout(() => this.#flush(), 20);
  }

  #flush(): void {
    if (this.#outTimer !== null) clearTimeout(this.#outTimer);
    this.#outTimer = null;
    if (this.#out.length === 0) return;
    const data = Buffer.concat(this.#out);
    this.#out = [];
    this.ctx.serial.print(this.id, data);
  }

  #clearGrace(): void {
    if (this.#graceTimer !== null) clearTimeout(this.#graceTimer);
    this.#graceTimer = null;
  }

  #note(text: string): void {
    this.#flush();
    this.ctx.serial.note(this.id, text);
  }
}
