/**
 * Images (Glance v2): those the viewer may use (`GET /image/v2/images`), an upload with a
 * progress bar (`POST /image/v2/images`, then the bytes with `PUT /image/v2/images/{id}/file`
 * through XMLHttpRequest, whose upload events give the progress; fetch has none), sharing with
 * another project (`PATCH` visibility `shared`, `POST …/members {member}`), and deletion.
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent, type ReactNode } from 'react';
import { ApiError, call, errorMessage, get, token } from '../../lib/api.ts';
import { Badge, ErrorNote, PageHeader, Time, Rows } from '../../ui/common.tsx';

/** An image as the list reads it. */
interface Image {
  id: string;
  name: string | null;
  status: string;
  visibility: string;
  disk_format: string | null;
  size: number | null;
  owner: string;
  created_at: string;
}

/** Upload `file` as the data of image `id`, reporting the fraction sent. */
function putFile(id: string, file: File, onProgress: (f: number) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('PUT', `/image/v2/images/${id}/file`);
    xhr.setRequestHeader('Content-Type', 'application/octet-stream');
    const t = token();
    if (t) xhr.setRequestHeader('X-Auth-Token', t);
    xhr.upload.onprogress = (e) => e.lengthComputable && onProgress(e.loaded / e.total);
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) return resolve();
      let body: unknown = xhr.responseText;
      try {
        body = JSON.parse(xhr.responseText);
      } catch {
        // Glance may answer in text.
      }
      reject(new ApiError(xhr.status, errorMessage(body) ?? `Upload failed (HTTP ${xhr.status}).`));
    };
    xhr.onerror = () => reject(new ApiError(0, 'The upload was interrupted (connection lost).'));
    xhr.send(file);
  });
}

/** The upload form. */
function Upload(): ReactNode {
  const qc = useQueryClient();
  const [file, setFile] = useState<File | null>(null);
  const [name, setName] = useState('');
  const [format, setFormat] = useState('qcow2');
  const [progress, setProgress] = useState<number | null>(null);
  const upload = useMutation({
    mutationFn: async () => {
      if (file === null) throw new Error('Choose a file.');
      const created = await call<{ id: string }>('POST', '/image/v2/images', {
        body: { name: name || file.name, disk_format: format, container_format: 'bare' },
      });
      setProgress(0);
      await qc.invalidateQueries({ queryKey: ['images'] });
      await putFile(created.body.id, file, setProgress);
    },
    onSettled: async () => {
      await qc.invalidateQueries({ queryKey: ['images'] });
    },
  });
  return (
    <form
      className="inline-form"
      onSubmit={(e: FormEvent) => {
        e.preventDefault();
        upload.mutate();
      }}
    >
      <label>
        File
        <input type="file" required onChange={(e) => setFile(e.target.files?.[0] ?? null)} />
      </label>
      <label>
        Name
        <input value={name} onChange={(e) => setName(e.target.value)} placeholder="the file's name" />
      </label>
      <label>
        Disk format
        <select value={format} onChange={(e) => setFormat(e.target.value)}>
          <option value="qcow2">qcow2</option>
          <option value="raw">raw</option>
          <option value="iso">iso</option>
        </select>
      </label>
      <button type="submit" disabled={upload.isPending}>
        {upload.isPending ? 'Uploading…' : 'Upload'}
      </button>
      {progress !== null ? (
        <label>
          Upload progress
          <progress max={1} value={progress} data-testid="upload-progress" aria-valuetext={`${Math.round(progress * 100)} %`} />
        </label>
      ) : null}
      <ErrorNote error={upload.error} />
    </form>
  );
}

/** Share an image with a project (by id). */
function Share({ image }: { image: Image }): ReactNode {
  const [project, setProject] = useState('');
  const share = useMutation({
    mutationFn: async () => {
      if (image.visibility !== 'shared')
        await call('PATCH', `/image/v2/images/${image.id}`, {
          body: [{ op: 'replace', path: '/visibility', value: 'shared' }],
          headers: { 'Content-Type': 'application/openstack-images-v2.1-json-patch' },
        });
      await call('POST', `/image/v2/images/${image.id}/members`, { body: { member: project } });
    },
  });
  return (
    <form
      className="inline-form"
      onSubmit={(e: FormEvent) => {
        e.preventDefault();
        share.mutate();
      }}
    >
      <label>
        <span className="sr-only">Project ID to share {image.name ?? image.id} with</span>
        <input value={project} onChange={(e) => setProject(e.target.value)} placeholder="project ID" required />
      </label>
      <button type="submit" className="ghost" disabled={share.isPending}>
        Share
      </button>
      {share.isSuccess ? <span className="muted">shared</span> : null}
      <ErrorNote error={share.error} />
    </form>
  );
}

/** The images page. */
export function Images(): ReactNode {
  const qc = useQueryClient();
  const images = useQuery({
    queryKey: ['images'],
    queryFn: async ({ signal }) => (await get<{ images: Image[] }>('/image/v2/images', signal)).images,
  });
  const remove = useMutation({
    mutationFn: async (id: string) => call('DELETE', `/image/v2/images/${id}`),
    onSuccess: async () => qc.invalidateQueries({ queryKey: ['images'] }),
  });
  return (
    <main>
      <PageHeader title="Images" />
      <Upload />
      <ErrorNote error={images.error ?? remove.error} />
      <table className="grid" aria-busy={images.isPending}>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Status</th>
            <th scope="col">Visibility</th>
            <th scope="col">Format</th>
            <th scope="col">Size</th>
            <th scope="col">Created</th>
            <th scope="col">
              <span className="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          <Rows
            pending={images.isPending}
            items={images.data}
            columns={7}
            empty="No images."
            row={(i) => (
              <tr key={i.id} data-image={i.name ?? i.id}>
                <td>{i.name ?? i.id}</td>
                <td>
                  <Badge value={i.status} />
                </td>
                <td>{i.visibility}</td>
                <td>{i.disk_format ?? '—'}</td>
                <td>{i.size === null ? '—' : `${(i.size / 1048576).toFixed(1)} MiB`}</td>
                <td>
                  <Time value={i.created_at} />
                </td>
                <td>
                  <Share image={i} />
                  <button type="button" className="danger" onClick={() => remove.mutate(i.id)} disabled={remove.isPending}>
                    Delete
                  </button>
                </td>
              </tr>
            )}
          />
        </tbody>
      </table>
    </main>
  );
}
