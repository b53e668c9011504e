/**
 * Operator view of Keystone projects (`/dashboard/admin/projects`): every project with its
 * description and parent (`GET /identity/v3/projects`), a create form (name, description,
 * parent; `POST /identity/v3/projects`) whose refusal (a duplicate name, an unknown parent) is
 * shown beside the field it concerns in Keystone's words, and delete
 * (`DELETE /identity/v3/projects/{id}`, on a second press).
 */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent, type ReactNode } from 'react';
import { call } from '../../lib/api.ts';
import { ErrorNote, LoadingRows, PageHeader } from '../../ui/common.tsx';
import { ConfirmButton, projectNamer, useProjects } from './shared.tsx';

/** The create form. */
function CreateProject(): ReactNode {
  const qc = useQueryClient();
  const projects = useProjects();
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [parent, setParent] = useState('');
  const create = useMutation({
    mutationFn: async () =>
      call('POST', '/identity/v3/projects', {
        body: { project: { name, description, ...(parent ? { parent_id: parent } : {}) } },
      }),
    onSuccess: async () => {
      setName('');
      setDescription('');
      setParent('');
      await qc.invalidateQueries({ queryKey: ['admin', 'projects'] });
    },
  });
  // Keystone's message names what it refuses: the parent, or else the name.
  const message = create.error instanceof Error ? create.error.message : '';
  const onParent = /parent/i.test(message);
  return (
    <form
      className="inline-form"
      aria-label="Create a project"
      onSubmit={(e: FormEvent) => {
        e.preventDefault();
        create.mutate();
      }}
    >
      <div className="field">
        <label>
          Name
          <input
            name="name"
            required
            value={name}
            onChange={(e) => setName(e.target.value)}
            aria-invalid={create.isError && !onParent}
            aria-describedby={create.isError && !onParent ? 'project-name-error' : undefined}
          />
        </label>
        {create.isError && !onParent ? <ErrorNote error={create.error} id="project-name-error" /> : null}
      </div>
      <div className="field">
        <label>
          Description
          <input name="description" value={description} onChange={(e) => setDescription(e.target.value)} />
        </label>
      </div>
      <div className="field">
        <label>
          Parent
          <select
            name="parent"
            value={parent}
            onChange={(e) => setParent(e.target.value)}
            aria-invalid={create.isError && onParent}
            aria-describedby={create.isError && onParent ? 'project-parent-error' : undefined}
          >
            <option value="">none (the domain)</option>
            {(projects.data ?? []).map((p) => (
              <option key={p.id} value={p.id}>
                {p.name}
              </option>
            ))}
          </select>
        </label>
        {create.isError && onParent ? <ErrorNote error={create.error} id="project-parent-error" /> : null}
      </div>
      <button type="submit" disabled={create.isPending}>
        {create.isPending ? 'Creating…' : 'Create project'}
      </button>
    </form>
  );
}

/** The projects page. */
export function Projects(): ReactNode {
  const qc = useQueryClient();
  const projects = useProjects();
  const name = projectNamer(projects.data);
  const remove = useMutation({
    mutationFn: async (id: string) => call('DELETE', `/identity/v3/projects/${id}`),
    onSuccess: async () => qc.invalidateQueries({ queryKey: ['admin', 'projects'] }),
  });
  return (
    <main className="admin">
      <PageHeader title="Projects" />
      <h2>New project</h2>
      <CreateProject />
      <h2>All projects</h2>
      <ErrorNote error={projects.error ?? remove.error} />
      <table className="grid" aria-busy={projects.isPending}>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Description</th>
            <th scope="col">Parent</th>
            <th scope="col">ID</th>
            <th scope="col">
              <span className="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {projects.isPending ? (
            <LoadingRows columns={5} />
          ) : (
            (projects.data ?? []).map((p) => (
              <tr key={p.id} data-project={p.name}>
                <td>
                  {p.name}
                  {p.enabled ? null : <span className="badge plain">disabled</span>}
                </td>
                <td data-label="Description">{p.description || <span className="muted">—</span>}</td>
                <td data-label="Parent">
                  {p.parent_id && p.parent_id !== p.domain_id ? name(p.parent_id) : <span className="muted">domain {p.domain_id}</span>}
                </td>
                <td className="mono">{p.id}</td>
                <td>
                  <ConfirmButton
                    label="Delete"
                    what={`project ${p.name}`}
                    disabled={remove.isPending}
                    onConfirm={() => remove.mutate(p.id)}
                  />
                </td>
              </tr>
            ))
          )}
        </tbody>
      </table>
    </main>
  );
}
