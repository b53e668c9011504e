/**
 * Interop: Debian's `openstack image …` commands (python3-openstackclient 6.0 over
 * openstacksdk 0.101) against esi's image API, on a real `esi server` process:
 *
 * create --file (qcow2, streamed upload) → list → show → save --file (download, Content-MD5
 * check by the SDK) → set --property → add project → (as the member project) list, set
 * --accept, list, member list, save → (as another project) show fails → delete (as a
 * non-owner fails, as the owner succeeds; the data file is gone).
 *
 * Each step is its own test: a test that needs an image uploads its own, under its own name
 * ({@link ownImage}), so the tests do not depend on their order.
 *
 * Needs `/usr/bin/openstack` and openstacksdk (a failure when missing, see test/helpers/tools.ts).
 */
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { qcow2Header } from '../unit/images/qcow2-fixtures.ts';
import { describeNeeding, TOOLS } from '../helpers/tools.ts';
import { json, ok, openstack, startEsi, userEnv, type EsiProcess } from './cli-driver.ts';

let esi: EsiProcess;
let work: string;
let owner: Record<string, string>;
let consumer: Record<string, string>;
let stranger: Record<string, string>;
let consumerProject = '';
let disk = '';

/** A small qcow2 disk: made by qemu-img when installed, else a valid header plus data. */
function makeDisk(file: string): void {
  if (fs.existsSync('/usr/bin/qemu-img')) {
    execFileSync('/usr/bin/qemu-img', ['create', '-q', '-f', 'qcow2', file, '2G']);
    fs.appendFileSync(file, randomBytes(256 * 1024));
  } else {
    fs.writeFileSync(file, Buffer.concat([qcow2Header({ version: 3, size: 2 * 1024 ** 3 }), randomBytes(256 * 1024)]));
  }
}

const md5 = (file: string): string => createHash('md5').update(fs.readFileSync(file)).digest('hex');

/** Fails, naming the Debian packages, when one is missing (ESI_TEST_ALLOW_MISSING_TOOLS=1 skips instead). */
const NEEDS = [TOOLS.openstack, TOOLS.openstackSdkImage];

describeNeeding(NEEDS, 'openstack image CLI against the image API', () => {
  /**
   * Upload the qcow2 disk as the owner's image `cli-disk-<label>`; `shared` also shares it with
   * the consumer project, which accepts it.
   */
  async function ownImage(label: string, shared = false): Promise<{ id: string; name: string }> {
    const name = `cli-disk-${label}`;
    const created = await json(
      openstack(owner, 'image', 'create', '--file', disk, '--disk-format', 'qcow2', '--container-format', 'bare', name, '-f', 'json'),
    );
    if (shared) {
      await ok(openstack(owner, 'image', 'add', 'project', created.id, consumerProject));
      await ok(openstack(consumer, 'image', 'set', '--accept', created.id));
    }
    return { id: created.id, name };
  }

  beforeAll(async () => {
    esi = await startEsi();
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-image-cli-'));
    disk = path.join(work, 'disk.qcow2');
    makeDisk(disk);
    const admin = esi.adminEnv;
    const ids: Record<string, string> = {};
    const accounts: Array<[string, string]> = [
      ['img-owner', 'img-owner-user'],
      ['img-consumer', 'img-consumer-user'],
      ['img-stranger', 'img-stranger-user'],
    ];
    for (const [project, user] of accounts) {
      ids[project] = (await json(openstack(admin, 'project', 'create', project, '-f', 'json'))).id;
      await ok(openstack(admin, 'user', 'create', '--project', project, '--password', `pw-${user}`, user, '-f', 'json'));
      await ok(openstack(admin, 'role', 'add', '--user', user, '--project', project, 'member'));
    }
    consumerProject = ids['img-consumer']!;
    owner = userEnv(admin, 'img-owner-user', 'pw-img-owner-user', 'img-owner');
    consumer = userEnv(admin, 'img-consumer-user', 'pw-img-consumer-user', 'img-consumer');
    stranger = userEnv(admin, 'img-stranger-user', 'pw-img-stranger-user', 'img-stranger');
  });
  afterAll(async () => {
    await esi?.stop();
    if (work) fs.rmSync(work, { recursive: true, force: true });
    if (esi) fs.rmSync(esi.dataDir, { recursive: true, force: true });
  });

  it('image create --file uploads a qcow2 disk', async () => {
    const created = await json(
      openstack(owner, 'image', 'create', '--file', disk, '--disk-format', 'qcow2', '--container-format', 'bare', 'cli-disk', '-f', 'json'),
    );
    expect(created).toMatchObject({ name: 'cli-disk', disk_format: 'qcow2', container_format: 'bare', visibility: 'shared' });
  });

  it('image list and image show report the active image with its digests', async () => {
    const { id: imageId, name } = await ownImage('show');
    const list = await json(openstack(owner, 'image', 'list', '-f', 'json'));
    expect(list).toContainEqual({ ID: imageId, Name: name, Status: 'active' });
    const shown = await json(openstack(owner, 'image', 'show', name, '-f', 'json'));
    expect(shown).toMatchObject({
      id: imageId,
      status: 'active',
      checksum: md5(disk),
      size: fs.statSync(disk).size,
      virtual_size: 2 * 1024 ** 3,
    });
    expect(shown.properties.os_hash_algo).toBe('sha512');
  });

  it('image save --file downloads the same bytes', async () => {
    const { name } = await ownImage('save');
    const out = path.join(work, 'saved.qcow2');
    await ok(openstack(owner, 'image', 'save', '--file', out, name));
    expect(fs.readFileSync(out).equals(fs.readFileSync(disk))).toBe(true);
  });

  it('image set --property adds custom properties', async () => {
    const { id: imageId, name } = await ownImage('set');
    await ok(openstack(owner, 'image', 'set', '--property', 'os_distro=debian', '--property', 'hw_firmware_type=uefi', name));
    const shown = await json(openstack(owner, 'image', 'show', imageId, '-f', 'json'));
    expect(shown.properties).toMatchObject({ os_distro: 'debian', hw_firmware_type: 'uefi' });
  });

  it('image add project shares the image; the member accepts it with image set --accept', async () => {
    const { id: imageId, name } = await ownImage('share');
    const member = await json(openstack(owner, 'image', 'add', 'project', name, consumerProject, '-f', 'json'));
    expect(member).toMatchObject({ image_id: imageId, member_id: consumerProject, status: 'pending' });
    const before = await json(openstack(consumer, 'image', 'list', '-f', 'json'));
    expect(before.map((i: { ID: string }) => i.ID)).not.toContain(imageId);
    await ok(openstack(consumer, 'image', 'set', '--accept', imageId));
    const after = await json(openstack(consumer, 'image', 'list', '-f', 'json'));
    expect(after).toContainEqual({ ID: imageId, Name: name, Status: 'active' });
    const members = await json(openstack(owner, 'image', 'member', 'list', imageId, '-f', 'json'));
    expect(members).toEqual([{ 'Image ID': imageId, 'Member ID': consumerProject, Status: 'accepted' }]);
    const out = path.join(work, 'consumer.qcow2');
    await ok(openstack(consumer, 'image', 'save', '--file', out, imageId));
    expect(md5(out)).toBe(md5(disk));
  });

  it('hides the image from another project and refuses a delete by the member', async () => {
    const { id: imageId } = await ownImage('hidden', true);
    const shown = await openstack(stranger, 'image', 'show', imageId);
    expect(shown.code).not.toBe(0);
    expect(shown.stderr).toMatch(/No Image found/);
    const refused = await openstack(consumer, 'image', 'delete', imageId);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/403.*You are not authorized to complete delete_image action/);
  });

  it('image delete removes the image and its data', async () => {
    const { id: imageId, name } = await ownImage('delete');
    await ok(openstack(owner, 'image', 'delete', name));
    const list = await json(openstack(owner, 'image', 'list', '-f', 'json'));
    expect(list.map((i: { ID: string }) => i.ID)).not.toContain(imageId);
    expect(fs.existsSync(path.join(esi.dataDir, 'images', imageId))).toBe(false);
  });
});
