/**
 * Image temp URLs (src/domain/deploy/temp-url.ts): the deploy agent downloads image data — or
 * uploads a captured disk — without a Keystone token through a signed, expiring URL for one
 * image and one method; every other anonymous request is refused (401), and token holders keep
 * the image API's normal rules.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createPersonas, startTestServer, type Personas, type TestServer } from '../../helpers/harness.ts';

describe('image temp URLs', () => {
  let ts: TestServer;
  let p: Personas;
  let id: string;
  let other: string;
  const data = Buffer.from('esi image bytes '.repeat(1000));

  async function privateImage(bytes: Buffer): Promise<string> {
    const created = await call(ts, p.owner, 'POST', '/image/v2/images', { name: 'private', disk_format: 'raw', container_format: 'bare' });
    expect(created.status, created.text).toBe(201);
    const res = await fetch(`${ts.url}/image/v2/images/${created.body.id}/file`, {
      method: 'PUT',
      headers: { 'x-auth-token': p.owner.token!, 'content-type': 'application/octet-stream' },
      body: bytes,
    });
    expect(res.status).toBe(204);
    return created.body.id;
  }

  beforeAll(async () => {
    ts = await startTestServer();
    p = await createPersonas(ts);
    id = await privateImage(data);
    other = await privateImage(Buffer.from('other'));
  });
  afterAll(async () => {
    await ts?.close();
  });

  it('a signed URL downloads a private image without a token; nothing else does', async () => {
    const url = new URL(ts.server.services.imageTempUrls.sign(id, 60));
    expect(url.origin).toBe(ts.url);
    const ok = await fetch(url);
    expect(ok.status).toBe(200);
    expect(Buffer.from(await ok.arrayBuffer()).equals(data)).toBe(true);

    const sig = url.searchParams.get('temp_url_sig')!;
    const exp = url.searchParams.get('temp_url_expires')!;
    const tries = [
      `/image/v2/images/${id}/file`,
      `/image/v2/images/${id}/file?temp_url_sig=${'0'.repeat(64)}&temp_url_expires=${exp}`,
      `/image/v2/images/${id}/file?temp_url_sig=${sig}&temp_url_expires=${Number(exp) + 1}`,
      `/image/v2/images/${other}/file?temp_url_sig=${sig}&temp_url_expires=${exp}`,
      `/image/v2/images/${id}/file?temp_url_sig=${sig}&temp_url_expires=1`,
      `/image/v2/images/${id}/file?temp_url_sig=${sig}`,
    ];
    for (const path of tries) {
      const res = await call(ts, p.anonymous, 'GET', path);
      expect(res.status, path).toBe(401);
      expect(res.text).not.toContain(sig);
    }
    // The signature grants nothing else: image metadata still needs a token.
    expect((await call(ts, p.anonymous, 'GET', `/image/v2/images/${id}?temp_url_sig=${sig}&temp_url_expires=${exp}`)).status).toBe(401);
  });

  it('callers with a token keep the normal rules: owner and admin read, lessee and another project get 404', async () => {
    for (const who of [p.admin, p.owner]) expect((await call(ts, who, 'GET', `/image/v2/images/${id}/file`)).status, who.name).toBe(200);
    for (const who of [p.lessee, p.other]) expect((await call(ts, who, 'GET', `/image/v2/images/${id}/file`)).status, who.name).toBe(404);
  });

  it('a PUT URL uploads one queued image without a token; a GET URL cannot upload, a PUT URL cannot read', async () => {
    const created = await call(ts, p.lessee, 'POST', '/image/v2/images', {
      name: 'capture-target',
      disk_format: 'raw',
      container_format: 'bare',
    });
    const target = created.body.id as string;
    const put = (u: string, body = Buffer.from('captured bytes')) =>
      fetch(u, { method: 'PUT', headers: { 'content-type': 'application/octet-stream' }, body });
    const getUrl = ts.server.services.imageTempUrls.sign(target, 60);
    expect((await put(getUrl)).status).toBe(401);
    expect((await put(`${ts.url}/image/v2/images/${target}/file`)).status).toBe(401);
    const putUrl = ts.server.services.imageTempUrls.sign(target, 60, 'PUT');
    expect((await fetch(putUrl)).status).toBe(401);
    expect((await put(putUrl.replace(target, id))).status).toBe(401);
    expect((await put(putUrl)).status).toBe(204);
    const img = await call(ts, p.lessee, 'GET', `/image/v2/images/${target}`);
    expect(img.body).toMatchObject({ status: 'active', size: 14, owner: p.lessee.projectId });
    // The image has data now: the URL cannot replace it.
    expect((await put(putUrl)).status).toBe(409);
  });
});
