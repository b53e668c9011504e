/**
 * Provisioning from a node's page, as `esi node provision` does it with standard API calls:
 * the image (`GET /image/v2/images`, active ones), networks to attach first
 * (`POST /network/v2.0/esi/node-networks` each), `PATCH` of `instance_info/image_source`, then
 * `PUT …/states/provision {target: active, configdrive: {meta_data: {public_keys, hostname},
 * user_data}}`; and unprovisioning (`{target: deleted}`). A progress bar follows the deploy or
 * the cleaning live (the node's `deploy_step`/`clean_step` progress, refreshed by the live
 * channel) and reaches 100 % at the end; and capturing an active node's disk into a new image.
 */
import { useMutation, useQuery } from '@tanstack/react-query';
import { useState, type FormEvent, type ReactNode } from 'react';
import { call, get } from '../../lib/api.ts';
import { ErrorNote } from '../../ui/common.tsx';
import { CAPTURING, capturePhase, CLEANING, cleanPhase, DEPLOYING, deployPhase, fraction } from './deploy-phase.ts';

type Node = Record<string, any>;

/** MiB with one decimal. */
const mib = (bytes: number): string => `${(bytes / 1048576).toFixed(1)} MiB`;

/** The progress of a deploy or a cleaning, as a bar with its phase in words. */
export function ProvisionProgress({ node }: { node: Node }): ReactNode {
  const deploying = DEPLOYING.has(node.provision_state);
  const cleaning = CLEANING.has(node.provision_state);
  const capturing = CAPTURING.has(node.provision_state);
  if (!deploying && !cleaning && !capturing) return null;
  const p = deploying ? deployPhase(node) : capturing ? capturePhase(node) : cleanPhase(node);
  const f = fraction(node);
  const label = `${deploying ? 'Deploy' : capturing ? 'Capture' : 'Cleaning'}: ${p.phase}${p.bytes !== undefined ? ` (${mib(p.bytes)}${p.total ? ` of ${mib(p.total)}` : ''})` : ''}`;
  return (
    <div className="progress-block">
      <label>
        {label}
        <progress
          max={1}
          value={f ?? undefined}
          aria-valuetext={f === null ? p.phase : `${Math.round(f * 100)} %`}
          data-testid="provision-progress"
        />
      </label>
    </div>
  );
}

/**
 * Capture the node's disk into a new private image, as `esi node capture` does: the image is
 * created (`POST /image/v2/images`), then the node is asked to capture into it
 * (`POST /baremetal/v1/nodes/{id}/capture {image_id}`); a refused capture deletes the image again.
 */
function Capture({ node }: { node: Node }): ReactNode {
  const [name, setName] = useState('');
  const [format, setFormat] = useState('qcow2');
  const capture = useMutation({
    mutationFn: async () => {
      const image = await call<{ id: string }>('POST', '/image/v2/images', {
        body: { name, disk_format: format, container_format: 'bare', visibility: 'private' },
      });
      try {
        await call('POST', `/baremetal/v1/nodes/${node.uuid}/capture`, { body: { image_id: image.body.id } });
      } catch (e) {
        await call('DELETE', `/image/v2/images/${image.body.id}`).catch(() => undefined);
        throw e;
      }
    },
  });
  return (
    <form
      className="inline-form"
      aria-label="Capture the disk into an image"
      onSubmit={(e: FormEvent) => {
        e.preventDefault();
        capture.mutate();
      }}
    >
      <label>
        Image name
        <input required value={name} onChange={(e) => setName(e.target.value)} />
      </label>
      <label>
        Disk format
        <select value={format} onChange={(e) => setFormat(e.target.value)}>
          <option value="qcow2">qcow2</option>
          <option value="raw">raw</option>
        </select>
      </label>
      <button type="submit" disabled={capture.isPending}>
        Capture
      </button>
      {capture.isSuccess ? <span className="muted">capture started</span> : null}
      <ErrorNote error={capture.error} />
    </form>
  );
}

/** The provision form and the unprovision button of a node. */
export function ProvisionPanel({ node }: { node: Node }): ReactNode {
  const [image, setImage] = useState('');
  const [sshKey, setSshKey] = useState('');
  const [userData, setUserData] = useState('');
  const [networks, setNetworks] = useState<string[]>([]);
  const images = useQuery({
    queryKey: ['images', 'active'],
    queryFn: async ({ signal }) =>
      (await get<{ images: Array<{ id: string; name: string | null; status: string }> }>('/image/v2/images?status=active', signal)).images,
    enabled: node.provision_state === 'available',
  });
  const nets = useQuery({
    queryKey: ['networks'],
    queryFn: async ({ signal }) =>
      (await get<{ networks: Array<{ id: string; name: string }> }>('/network/v2.0/networks', signal)).networks,
    enabled: node.provision_state === 'available',
  });
  const provision = useMutation({
    mutationFn: async () => {
      if (image === '') throw new Error('Choose an image.');
      const key = sshKey.trim();
      if (key !== '' && !/^(ssh-|ecdsa-|sk-)\S+ \S+/.test(key))
        throw new Error('The SSH key is not an OpenSSH public key (ssh-ed25519 AAAA…).');
      for (const network of networks) await call('POST', '/network/v2.0/esi/node-networks', { body: { node: node.uuid, network } });
      await call('PATCH', `/baremetal/v1/nodes/${node.uuid}`, { body: [{ op: 'add', path: '/instance_info/image_source', value: image }] });
      const hostname = node.name ?? node.uuid;
      const configdrive = {
        meta_data: { hostname, name: hostname, ...(key !== '' ? { public_keys: { default: key } } : {}) },
        ...(userData !== '' ? { user_data: userData } : {}),
      };
      await call('PUT', `/baremetal/v1/nodes/${node.uuid}/states/provision`, { body: { target: 'active', configdrive } });
    },
  });
  const unprovision = useMutation({
    mutationFn: async () => call('PUT', `/baremetal/v1/nodes/${node.uuid}/states/provision`, { body: { target: 'deleted' } }),
  });

  if (node.provision_state === 'active' || node.provision_state === 'deploy failed')
    return (
      <section aria-labelledby="provision-heading">
        <h2 id="provision-heading">Instance</h2>
        <button type="button" className="danger" onClick={() => unprovision.mutate()} disabled={unprovision.isPending}>
          Unprovision
        </button>
        <ErrorNote error={unprovision.error} />
        {node.provision_state === 'active' ? <Capture node={node} /> : null}
      </section>
    );
  if (node.provision_state !== 'available') return <ProvisionProgress node={node} />;
  return (
    <section aria-labelledby="provision-heading">
      <h2 id="provision-heading">Provision</h2>
      <form
        className="stack-form"
        onSubmit={(e: FormEvent) => {
          e.preventDefault();
          provision.mutate();
        }}
      >
        <label>
          Image
          <select required value={image} onChange={(e) => setImage(e.target.value)}>
            <option value="">{images.isPending ? 'Loading images…' : 'Choose an image'}</option>
            {(images.data ?? []).map((i) => (
              <option key={i.id} value={i.id}>
                {i.name ?? i.id}
              </option>
            ))}
          </select>
        </label>
        <fieldset>
          <legend>Networks to attach</legend>
          {(nets.data ?? []).length === 0 ? <p className="muted">No networks you may use.</p> : null}
          {(nets.data ?? []).map((n) => (
            <label key={n.id} className="inline">
              <input
                type="checkbox"
                checked={networks.includes(n.id)}
                onChange={(e) => setNetworks(e.target.checked ? [...networks, n.id] : networks.filter((x) => x !== n.id))}
              />
              {n.name || n.id}
            </label>
          ))}
        </fieldset>
        <label>
          SSH public key
          <textarea rows={2} value={sshKey} onChange={(e) => setSshKey(e.target.value)} placeholder="ssh-ed25519 AAAA… you@host" />
        </label>
        <label>
          User data (cloud-init)
          <textarea rows={4} value={userData} onChange={(e) => setUserData(e.target.value)} placeholder="#cloud-config" />
        </label>
        <ErrorNote error={provision.error} />
        <button type="submit" disabled={provision.isPending}>
          {provision.isPending ? 'Starting…' : 'Provision'}
        </button>
      </form>
    </section>
  );
}
