/**
 * Upload digests computed off the main thread: one worker thread hashes MD5, another SHA-512,
 * for every upload at once (each upload has its own hash state in each worker). The event loop
 * keeps serving requests while gigabytes are hashed, and the two digests run in parallel: an
 * upload goes at the speed of the slower digest (MD5) instead of the sum of both.
 *
 * Each upload copies its chunks once into a ring buffer (a `SharedArrayBuffer`, 8 MiB by
 * default) that both workers read; a message per 1 MiB tells them which bytes to hash. A region
 * of the ring is reused once both workers have hashed it; when the ring is full, `update`
 * returns a promise that resolves when the chunk has been copied, which pauses the upload
 * stream. Memory is therefore fixed per upload, and rings are reused across uploads (no garbage
 * per chunk).
 *
 * The workers start on first use, are kept referenced only while digests are in progress (an
 * idle pool never keeps the process alive), and are restarted after a crash; a crash fails
 * the digests in progress, whose uploads then fail and are restored (see
 * `src/domain/images/data.ts`). The worker code is plain JavaScript evaluated by `node:worker_threads`,
 * so it runs the same under tsx, tests and production.
 */
import { Worker } from 'node:worker_threads';
import type { DataDigests, DigestFactory, StreamingDigest } from '../../domain/images/ports.ts';

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const states = new Map();
parentPort.on('message', (m) => {
  const s = states.get(m.id);
  if (m.kind === 'open') {
    states.set(m.id, { hash: createHash(workerData.algorithm), ring: new Uint8Array(m.ring) });
  } else if (m.kind === 'update') {
    if (s) s.hash.update(s.ring.subarray(m.offset, m.offset + m.length));
    parentPort.postMessage({ kind: 'ack', id: m.id, length: m.length });
  } else if (m.kind === 'final') {
    states.delete(m.id);
    parentPort.postMessage({ kind: 'digest', id: m.id, hex: (s ? s.hash : createHash(workerData.algorithm)).digest('hex') });
  } else if (m.kind === 'drop') {
    states.delete(m.id);
  }
});
`;

/** A message to a hash worker. */
type Request =
  | { kind: 'open'; id: number; ring: SharedArrayBuffer }
  | { kind: 'update'; id: number; offset: number; length: number }
  | { kind: 'final' | 'drop'; id: number };

/** A message from a hash worker. */
type Reply = { kind: 'ack'; id: number; length: number } | { kind: 'digest'; id: number; hex: string };

/** What one upload listens to on one worker. */
interface Listener {
  reply(msg: Reply): void;
  fail(err: Error): void;
}

/** One worker thread computing one algorithm for many uploads. */
class HashWorker {
  private worker: Worker | null = null;
  private readonly listeners = new Map<number, Listener>();

  constructor(private readonly algorithm: 'md5' | 'sha512') {}

  /** Register an upload (starts the worker if needed; it is referenced while in use). */
  attach(id: number, listener: Listener): void {
    const worker = this.ensure();
    this.listeners.set(id, listener);
    if (this.listeners.size === 1) worker.ref();
  }

  /** Unregister an upload (the worker is unreferenced when idle). */
  detach(id: number): void {
    if (!this.listeners.delete(id)) return;
    if (this.listeners.size === 0) this.worker?.unref();
  }

  post(msg: Request): void {
    this.ensure().postMessage(msg);
  }

  async close(): Promise<void> {
    const w = this.worker;
    this.worker = null;
    if (w) await w.terminate();
  }

  private ensure(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { algorithm: this.algorithm } });
    worker.unref();
    worker.on('message', (msg: Reply) => this.listeners.get(msg.id)?.reply(msg));
    const failAll = (err: Error): void => {
      if (this.worker === worker) this.worker = null;
      const listeners = [...this.listeners.values()];
      this.listeners.clear();
      for (const l of listeners) l.fail(err);
    };
    worker.on('error', failAll);
    worker.on('exit', (code) => failAll(new Error(`the ${this.algorithm} hash worker exited (code ${code})`)));
    this.worker = worker;
    return worker;
  }
}

/** Idle rings kept for reuse. */
const SPARE_RINGS = 4;

/** Copied bytes are announced to the workers in batches of this size (1 MiB). */
const BATCH = 1024 * 1024;

/** MD5 and SHA-512 in two worker threads (see the module comment). */
export class WorkerDigests implements DigestFactory {
  private readonly md5 = new HashWorker('md5');
  private readonly sha = new HashWorker('sha512');
  private readonly spare: SharedArrayBuffer[] = [];
  private nextId = 1;

  /** @param ringBytes size of each upload's ring buffer (default 8 MiB) */
  constructor(private readonly ringBytes = 8 * 1024 * 1024) {}

  create(): StreamingDigest {
    const id = this.nextId++;
    const ringSize = this.ringBytes;
    let ring: SharedArrayBuffer | null = this.spare.pop() ?? new SharedArrayBuffer(ringSize);
    const view = new Uint8Array(ring);
    const workers = [
      ['md5', this.md5],
      ['sha', this.sha],
    ] as const;
    /** Bytes copied into the ring, and bytes each worker has hashed (both only grow). */
    let written = 0;
    let posted = 0;
    const hashed = { md5: 0, sha: 0 };
    const hex: { md5?: string; sha?: string } = {};
    let failure: Error | null = null;
    let pending: { chunk: Uint8Array; done: number; resolve: () => void; reject: (e: Error) => void } | null = null;
    let finishing: { resolve: (d: DataDigests) => void; reject: (e: Error) => void } | null = null;

    const release = (): void => {
      for (const [, w] of workers) w.detach(id);
      if (ring && this.spare.length < SPARE_RINGS) this.spare.push(ring);
      ring = null;
    };
    /** Tell the workers about every copied byte not announced yet (contiguous ring regions). */
    const announce = (): void => {
      while (posted < written) {
        const at = posted % ringSize;
        const n = Math.min(written - posted, ringSize - at);
        for (const [, w] of workers) w.post({ kind: 'update', id, offset: at, length: n });
        posted += n;
      }
    };
    /**
     * Copy as much of `chunk` (from `from`) as the ring has room for. Copied bytes are announced
     * to the workers in batches of {@link BATCH} (fewer messages), and at once when the ring is
     * full (so that the workers can free it).
     */
    const copy = (chunk: Uint8Array, from: number): number => {
      let done = from;
      while (done < chunk.length) {
        const free = ringSize - (written - Math.min(hashed.md5, hashed.sha));
        const at = written % ringSize;
        const n = Math.min(chunk.length - done, free, ringSize - at);
        if (n <= 0) break;
        view.set(chunk.subarray(done, done + n), at);
        written += n;
        done += n;
        if (written - posted >= BATCH) announce();
      }
      if (done < chunk.length) announce();
      return done;
    };
    const settle = (): void => {
      if (pending) {
        pending.done = copy(pending.chunk, pending.done);
        if (pending.done === pending.chunk.length) {
          const p = pending;
          pending = null;
          p.resolve();
        }
      }
      if (finishing && hex.md5 !== undefined && hex.sha !== undefined) {
        const f = finishing;
        finishing = null;
        release();
        f.resolve({ md5: hex.md5, sha512: hex.sha });
      }
    };
    const fail = (err: Error): void => {
      failure ??= err;
      pending?.reject(failure);
      finishing?.reject(failure);
      pending = finishing = null;
      release();
    };
    for (const [name, w] of workers) {
      w.attach(id, {
        reply(msg) {
          if (msg.kind === 'ack') hashed[name] += msg.length;
          else hex[name] = msg.hex;
          settle();
        },
        fail,
      });
      w.post({ kind: 'open', id, ring });
    }

    return {
      update: (chunk) => {
        if (failure) return Promise.reject(failure);
        if (pending) return Promise.reject(new Error('StreamingDigest.update called before the previous update finished'));
        const done = copy(chunk, 0);
        if (done === chunk.length) return undefined;
        return new Promise<void>((resolve, reject) => {
          pending = { chunk, done, resolve, reject };
        });
      },
      digest: () => {
        if (failure) return Promise.reject(failure);
        return new Promise<DataDigests>((resolve, reject) => {
          finishing = { resolve, reject };
          announce();
          for (const [, w] of workers) w.post({ kind: 'final', id });
        });
      },
      abort: () => {
        if (ring === null) return;
        for (const [, w] of workers) w.post({ kind: 'drop', id });
        pending = finishing = null;
        release();
      },
    };
  }

  /** Stop the worker threads (they restart on the next upload). */
  async close(): Promise<void> {
    await Promise.all([this.md5.close(), this.sha.close()]);
  }
}
