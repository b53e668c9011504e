/**
 * What image answers reveal about other projects (tenant isolation):
 *
 * - adding a member: any project id is accepted (200, `pending`), whether or not a project
 *   with that id exists — as Glance, which never asks Keystone — so an image owner cannot use
 *   the member API to learn which project ids exist;
 * - a chosen image `id` that is taken is 409 whoever owns the image (Glance's answer, kept and
 *   documented in docs/images.md): the message repeats the caller's own input and nothing of
 *   the other project's image, and the image stays invisible (404) and unchanged.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createImage, expectGlanceError, img, snapshot, startImageEnv, type ImageEnv } from './support.ts';

let env: ImageEnv;
beforeAll(async () => {
  env = await startImageEnv();
});
afterAll(async () => env?.ts.close());

describe('image members do not reveal which projects exist', () => {
  it('accepts an unknown project id exactly as an existing one', async () => {
    const { owner, lessee } = env.p;
    const id = await createImage(env, owner, { name: 'probe' });
    const known = await img(env, owner, 'POST', `/images/${id}/members`, { member: lessee.projectId });
    const unknown = await img(env, owner, 'POST', `/images/${id}/members`, { member: 'no-such-project' });
    expect(known.status, known.text).toBe(200);
    expect(unknown.status, unknown.text).toBe(200);
    expect(Object.keys(unknown.body).sort()).toEqual(Object.keys(known.body).sort());
    expect(unknown.body).toMatchObject({ member_id: 'no-such-project', image_id: id, status: 'pending' });
    const members = (await img(env, owner, 'GET', `/images/${id}/members`)).body.members.map((m: { member_id: string }) => m.member_id);
    expect(members.sort()).toEqual([lessee.projectId, 'no-such-project'].sort());
    // Removing it works as for any member.
    expect((await img(env, owner, 'DELETE', `/images/${id}/members/no-such-project`)).status).toBe(204);
  });
});

describe('a taken image id', () => {
  it('is 409 with the caller’s own input only, for visible and invisible images alike', async () => {
    const { owner, other } = env.p;
    const hidden = await createImage(env, owner, { name: 'o1-secret', visibility: 'private', id: '7d4f3c2b-1a09-4e8d-9c7b-6a5f4e3d2c1b' });
    const mine = await createImage(env, other, { name: 'o2-own', visibility: 'private' });
    expectGlanceError(await img(env, other, 'GET', `/images/${hidden}`), 404);
    const before = await snapshot(env);
    const onHidden = await img(env, other, 'POST', '/images', { id: hidden, name: 'x' });
    const onOwn = await img(env, other, 'POST', '/images', { id: mine, name: 'x' });
    expectGlanceError(onHidden, 409, `Image ID ${hidden} already exists!`);
    expectGlanceError(onOwn, 409, `Image ID ${mine} already exists!`);
    expect(onHidden.text).not.toContain('o1-secret');
    expect(onHidden.text).not.toContain(owner.projectId!);
    expect(await snapshot(env)).toEqual(before);
    expect((await img(env, owner, 'GET', `/images/${hidden}`)).body).toMatchObject({ name: 'o1-secret', owner: owner.projectId });
  });
});
