/**
 * Image members (`/image/v2/images/{id}/members…`) for every persona: the owner (and admin)
 * adds and removes members of a shared image; only the member project (or admin) changes its
 * status; the owner sees every member, a member only itself; others get 404; members of a
 * non-shared image are refused; an accepted image appears in the member's default list, a
 * pending one only with `member_status=pending`, a rejected one with `member_status=rejected`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createImage, expectGlanceError, img, snapshot, startImageEnv, type ImageEnv } from './support.ts';

let env: ImageEnv;
beforeAll(async () => {
  env = await startImageEnv();
});
afterAll(async () => env?.ts.close());

const listed = async (who: 'lessee' | 'other', id: string, q = ''): Promise<boolean> => {
  const res = await img(env, env.p[who], 'GET', `/images?limit=1000${q}`);
  return res.body.images.some((i: { id: string }) => i.id === id);
};

describe('members of a shared image', () => {
  it('follows the consumer through pending, accepted and rejected', async () => {
    const { owner, lessee, other, admin, anonymous } = env.p;
    const id = await createImage(env, owner, { name: 'to-share' });
    const L = lessee.projectId!;

    // Before sharing: the lessee cannot see the image or its members.
    expectGlanceError(await img(env, lessee, 'GET', `/images/${id}/members`), 404, `Image ${id} not found.`);
    expectGlanceError(await img(env, lessee, 'POST', `/images/${id}/members`, { member: L }), 404);
    expectGlanceError(await img(env, anonymous, 'POST', `/images/${id}/members`, { member: L }), 401);

    const add = await img(env, owner, 'POST', `/images/${id}/members`, { member: L });
    expect(add.status).toBe(200);
    expect(add.body).toEqual({
      member_id: L,
      image_id: id,
      status: 'pending',
      created_at: expect.stringMatching(/Z$/),
      updated_at: expect.stringMatching(/Z$/),
      schema: '/v2/schemas/member',
    });
    expectGlanceError(
      await img(env, owner, 'POST', `/images/${id}/members`, { member: L }),
      409,
      `Member ${L} is duplicated for image ${id}`,
    );

    // Pending: visible by id, not in the default list, listed with member_status=pending.
    expect((await img(env, lessee, 'GET', `/images/${id}`)).status).toBe(200);
    expect(await listed('lessee', id)).toBe(false);
    expect(await listed('lessee', id, '&member_status=pending')).toBe(true);

    // Only the member answers; the owner may not, another project cannot see it.
    expectGlanceError(
      await img(env, owner, 'PUT', `/images/${id}/members/${L}`, { status: 'accepted' }),
      403,
      `Not allowed to update members for image ${id}.`,
    );
    expectGlanceError(await img(env, other, 'PUT', `/images/${id}/members/${L}`, { status: 'accepted' }), 404);
    expectGlanceError(await img(env, anonymous, 'PUT', `/images/${id}/members/${L}`, { status: 'accepted' }), 401);
    const acc = await img(env, lessee, 'PUT', `/images/${id}/members/${L}`, { status: 'accepted' });
    expect(acc.status).toBe(200);
    expect(acc.body.status).toBe('accepted');
    expect(await listed('lessee', id)).toBe(true);
    expect(await listed('other', id)).toBe(false);

    const rej = await img(env, lessee, 'PUT', `/images/${id}/members/${L}`, { status: 'rejected', member: L });
    expect(rej.body.status).toBe('rejected');
    expect(await listed('lessee', id)).toBe(false);
    expect(await listed('lessee', id, '&member_status=rejected')).toBe(true);
    const byAdmin = await img(env, admin, 'PUT', `/images/${id}/members/${L}`, { status: 'accepted' });
    expect(byAdmin.body.status).toBe('accepted');
  });

  it('shows every member to the owner and admin, only itself to a member, nothing to others', async () => {
    const { owner, lessee, other, admin, anonymous } = env.p;
    const id = await createImage(env, owner, { name: 'two-members' });
    for (const m of [lessee, other])
      expect((await img(env, owner, 'POST', `/images/${id}/members`, { member: m.projectId })).status).toBe(200);
    const ids = (res: { body: { members: Array<{ member_id: string }> } }) => res.body.members.map((m) => m.member_id).sort();
    const both = [lessee.projectId!, other.projectId!].sort();
    const o = await img(env, owner, 'GET', `/images/${id}/members`);
    expect(o.body.schema).toBe('/v2/schemas/members');
    expect(ids(o)).toEqual(both);
    expect(ids(await img(env, admin, 'GET', `/images/${id}/members`))).toEqual(both);
    expect(ids(await img(env, lessee, 'GET', `/images/${id}/members`))).toEqual([lessee.projectId]);
    expect((await img(env, lessee, 'GET', `/images/${id}/members/${lessee.projectId}`)).body.member_id).toBe(lessee.projectId);
    expectGlanceError(
      await img(env, lessee, 'GET', `/images/${id}/members/${other.projectId}`),
      404,
      `${other.projectId} not found in the member list of the image ${id}.`,
    );
    expect((await img(env, owner, 'GET', `/images/${id}/members/${other.projectId}`)).status).toBe(200);
    expectGlanceError(await img(env, anonymous, 'GET', `/images/${id}/members`), 401);

    // Members cannot manage members; the owner removes one.
    expectGlanceError(
      await img(env, lessee, 'DELETE', `/images/${id}/members/${lessee.projectId}`),
      403,
      `Not allowed to delete members for image ${id}.`,
    );
    expectGlanceError(
      await img(env, lessee, 'POST', `/images/${id}/members`, { member: admin.projectId }),
      403,
      `Not allowed to create members for image ${id}.`,
    );
    expect((await img(env, owner, 'DELETE', `/images/${id}/members/${other.projectId}`)).status).toBe(204);
    expectGlanceError(await img(env, owner, 'DELETE', `/images/${id}/members/${other.projectId}`), 404);
    expectGlanceError(await img(env, other, 'GET', `/images/${id}`), 404);
    expect((await img(env, admin, 'DELETE', `/images/${id}/members/${lessee.projectId}`)).status).toBe(204);
    expectGlanceError(await img(env, lessee, 'GET', `/images/${id}`), 404);
  });

  it('refuses members for images that are not shared and bad member bodies, and repeats nothing', async () => {
    const { owner, lessee } = env.p;
    const priv = await createImage(env, owner, { name: 'not-shared', visibility: 'private' });
    const before = await snapshot(env);
    expectGlanceError(
      await img(env, owner, 'POST', `/images/${priv}/members`, { member: lessee.projectId }),
      403,
      /Not allowed to create members for image .*Only shared images have members\./,
    );
    expectGlanceError(await img(env, owner, 'GET', `/images/${priv}/members`), 403, /Only shared images have members/);
    expectGlanceError(await img(env, owner, 'GET', `/images/${priv}/members/${lessee.projectId}`), 404);
    const shared = await createImage(env, owner, { name: 'shared-bad' });
    const mid = await snapshot(env);
    expectGlanceError(
      await img(env, owner, 'POST', `/images/${shared}/members`, { member: lessee.projectId, colour: 'red' }),
      400,
      /Unknown attribute/,
    );
    expectGlanceError(await img(env, owner, 'POST', `/images/${shared}/members`, {}), 400, 'Member to be added not specified');
    expectGlanceError(await img(env, owner, 'POST', `/images/${shared}/members`, { member: '' }), 400, "Member can't be empty");
    expectGlanceError(await img(env, owner, 'POST', `/images/${shared}/members`, { member: 7 }), 400, /Expected a member in the form/);
    expectGlanceError(await img(env, owner, 'POST', `/images/${shared}/members`, [lessee.projectId]), 400, /Expected a member in the form/);
    expect(await snapshot(env)).toEqual(mid);
    await img(env, owner, 'POST', `/images/${shared}/members`, { member: lessee.projectId });
    const after = await snapshot(env);
    expectGlanceError(
      await img(env, lessee, 'PUT', `/images/${shared}/members/${lessee.projectId}`, { status: 'maybe' }),
      400,
      'Incorrect request: Status must be "pending", "accepted" or "rejected".',
    );
    expectGlanceError(await img(env, lessee, 'PUT', `/images/${shared}/members/${lessee.projectId}`, {}), 400, 'Status not specified');
    expectGlanceError(
      await img(env, lessee, 'PUT', `/images/${shared}/members/${lessee.projectId}`, { status: 'accepted', member: 'someone-else' }),
      400,
      /not the member of the URL/,
    );
    expect((await img(env, lessee, 'GET', `/images/${shared}/members/${lessee.projectId}`)).body.status).toBe('pending');
    expect(await snapshot(env)).toEqual(after);
    expect(before.image_members).toBe(mid.image_members);
  });

  it('answers each member endpoint for every persona', async () => {
    const { owner, lessee, other, admin, anonymous } = env.p;
    const id = await createImage(env, owner, { name: 'matrix' });
    const L = lessee.projectId!;
    const add = (who: typeof owner, member: string) => img(env, who, 'POST', `/images/${id}/members`, { member });
    expectGlanceError(await add(anonymous, L), 401);
    expectGlanceError(await add(other, L), 404);
    expect((await add(admin, L)).status).toBe(200);
    expect((await add(owner, admin.projectId!)).status).toBe(200);
    const one = `/images/${id}/members/${L}`;
    const expectOne: Record<string, number> = { admin: 200, owner: 200, lessee: 200, other: 404, anonymous: 401 };
    const expectList: Record<string, number> = { admin: 200, owner: 200, lessee: 200, other: 404, anonymous: 401 };
    for (const who of ['admin', 'owner', 'lessee', 'other', 'anonymous'] as const) {
      expect((await img(env, env.p[who], 'GET', one)).status, `GET one as ${who}`).toBe(expectOne[who]);
      expect((await img(env, env.p[who], 'GET', `/images/${id}/members`)).status, `GET list as ${who}`).toBe(expectList[who]);
    }
    expectGlanceError(await img(env, other, 'DELETE', one), 404);
    expectGlanceError(await img(env, anonymous, 'DELETE', one), 401);
    expect((await img(env, admin, 'PUT', one, { status: 'rejected' })).body.status).toBe('rejected');
    expect((await img(env, owner, 'DELETE', one)).status).toBe(204);
  });

  it('enforces the member quota (413)', async () => {
    const id = await createImage(env, env.p.owner, { name: 'quota' });
    const db = env.ts.server.services.store.db;
    const now = Date.now();
    await db
      .insertInto('image_members')
      .values(
        Array.from({ length: 128 }, (_, i) => ({
          image_id: id,
          member_id: `filler-${i}`,
          status: 'pending',
          created_at: now,
          updated_at: now,
        })),
      )
      .execute();
    expectGlanceError(
      await img(env, env.p.owner, 'POST', `/images/${id}/members`, { member: env.p.lessee.projectId }),
      413,
      /member limit exceeded/,
    );
  });
});
