/**
 * qcow2 header inspection (src/domain/images/qcow2.ts) against headers written by the real
 * `qemu-img` (Debian qemu-utils; a failure without it, see test/helpers/tools.ts) and against hand-built headers for the
 * refusals (backing file, external data file, bad version, bad cluster size, truncation).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { hasQcow2Magic, inspectQcow2, QCOW2_HEADER_BYTES } from '../../../src/domain/images/qcow2.ts';
import { describeNeeding, TOOLS } from '../../helpers/tools.ts';
import { qcow2Header } from './qcow2-fixtures.ts';

const QEMU_IMG = '/usr/bin/qemu-img';

describeNeeding([TOOLS.qemuImg], 'qemu-img images', () => {
  function make(extra: string[], size: string): Buffer {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-qcow2-'));
    try {
      const file = path.join(dir, 'disk.qcow2');
      execFileSync(QEMU_IMG, [
        'create',
        '-q',
        '-f',
        'qcow2',
        ...extra.map((a) => a.replaceAll('%DIR%', dir)),
        file,
        ...(size ? [size] : []),
      ]);
      return fs.readFileSync(file).subarray(0, QCOW2_HEADER_BYTES);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }

  it('reads version 3 (compat=1.1) and version 2 (compat=0.10) headers', () => {
    expect(inspectQcow2(make(['-o', 'compat=1.1'], '3G'))).toEqual({
      ok: true,
      header: { version: 3, virtualSize: 3 * 1024 ** 3, clusterBits: 16 },
    });
    expect(inspectQcow2(make(['-o', 'compat=0.10,cluster_size=4096'], '512M'))).toEqual({
      ok: true,
      header: { version: 2, virtualSize: 512 * 1024 ** 2, clusterBits: 12 },
    });
  });

  it('refuses an image with a backing file and one with an external data file', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-qcow2-base-'));
    try {
      const base = path.join(dir, 'base.raw');
      fs.writeFileSync(base, Buffer.alloc(1024 * 1024));
      expect(inspectQcow2(make(['-F', 'raw', '-b', base], ''))).toEqual({
        ok: false,
        reason: 'qcow2 images with a backing file are not allowed',
      });
      expect(inspectQcow2(make(['-o', `data_file=${path.join(dir, 'data.raw')}`], '1M'))).toEqual({
        ok: false,
        reason: 'qcow2 images with an external data file are not allowed',
      });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('hand-built qcow2 headers', () => {
  it('accepts well-formed version 2 and 3 headers', () => {
    expect(inspectQcow2(qcow2Header({ version: 2, size: 5 }))).toEqual({
      ok: true,
      header: { version: 2, virtualSize: 5, clusterBits: 16 },
    });
    expect(inspectQcow2(qcow2Header({ version: 3, size: 2 ** 40 }))).toEqual({
      ok: true,
      header: { version: 3, virtualSize: 2 ** 40, clusterBits: 16 },
    });
  });

  it('refuses what is not an acceptable qcow2 header', () => {
    expect(
      inspectQcow2(
        Buffer.from('not a disk image at all, just text..........................................................................'),
      ),
    ).toMatchObject({ ok: false, reason: /no qcow2 magic/ });
    expect(inspectQcow2(qcow2Header({ version: 4 }))).toMatchObject({ ok: false, reason: 'qcow2 version 4 is not supported' });
    expect(inspectQcow2(qcow2Header({ version: 3, clusterBits: 30 }))).toMatchObject({ ok: false, reason: /cluster size/ });
    expect(inspectQcow2(qcow2Header({ version: 3 }).subarray(0, 80))).toMatchObject({ ok: false, reason: 'the qcow2 header is truncated' });
    expect(inspectQcow2(qcow2Header({ version: 2 }).subarray(0, 40))).toMatchObject({ ok: false, reason: 'the qcow2 header is truncated' });
    const huge = qcow2Header({ version: 3 });
    huge.writeBigUInt64BE(2n ** 60n, 24);
    expect(inspectQcow2(huge)).toMatchObject({ ok: false, reason: /implausibly large/ });
  });

  it('recognises the magic only at the start', () => {
    expect(hasQcow2Magic(qcow2Header())).toBe(true);
    expect(hasQcow2Magic(Buffer.concat([Buffer.from([0]), qcow2Header()]))).toBe(false);
    expect(hasQcow2Magic(Buffer.from([0x51, 0x46]))).toBe(false);
  });
});
