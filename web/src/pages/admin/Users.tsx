/**
 * Operator view of Keystone users and their roles (`/dashboard/admin/users`): every user with
 * default project and email (`GET /identity/v3/users`), a create form (name, password, default
 * project, email; `POST /identity/v3/users`), delete (`DELETE /identity/v3/users/{id}`), and the
 * role assignments (`GET /identity/v3/role_assignments?include_names=true`) with a grant form —
 * a role of `GET /identity/v3/roles` to a user on a project
 * (`PUT /identity/v3/projects/{project}/users/{user}/roles/{role}`) — and revoke (`DELETE` of
 * that URL, or of `/identity/v3/system/users/{user}/roles/{role}` for a system assignment).
 * Refusals are shown beside the form that caused them, in Keystone's words.
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent, type ReactNode } from 'react';
import { call, get } from '../../lib/api.ts';
import { ErrorNote, LoadingRows, PageHeader } from '../../ui/common.tsx';
import { ConfirmButton, projectNamer, useProjects, useRoles, useUsers } from './shared.tsx';

/** One role assignment as Keystone lists it with names. */
interface Assignment {
  role: { id: string; name?: string };
  user?: { id: string; name?: string };
  group?: { id: string; name?: string };
  scope: { project?: { id: string; name?: string }; system?: { all: boolean }; domain?: { id: string; name?: string } };
}

/** The create-user form. */
function CreateUser(): ReactNode {
  const qc = useQueryClient();
  const projects = useProjects();
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const [project, setProject] = useState('');
  const [email, setEmail] = useState('');
  const create = useMutation({
    mutationFn: async () =>
      call('POST', '/identity/v3/users', {
        body: {
          user: {
            name,
            password,
            ...(project ? { default_project_id: project } : {}),
            ...(email ? { email } : {}),
          },
        },
      }),
    onSuccess: async () => {
      setName('');
      setPassword('');
      setProject('');
      setEmail('');
      await qc.invalidateQueries({ queryKey: ['admin', 'users'] });
    },
  });
  return (
    <form
      className="inline-form"
      aria-label="Create a user"
      aria-describedby={create.isError ? 'user-create-error' : undefined}
      onSubmit={(e: FormEvent) => {
        e.preventDefault();
        create.mutate();
      }}
    >
      <label>
        Name
        <input name="name" required autoComplete="off" value={name} onChange={(e) => setName(e.target.value)} />
      </label>
      <label>
        Password
        <input
          name="password"
          type="password"
          required
          autoComplete="new-password"
          value={password}
          onChange={(e) => setPassword(e.target.value)}
        />
      </label>
      <label>
        Default project
        <select name="default_project" value={project} onChange={(e) => setProject(e.target.value)}>
          <option value="">none</option>
          {(projects.data ?? []).map((p) => (
            <option key={p.id} value={p.id}>
              {p.name}
            </option>
          ))}
        </select>
      </label>
      <label>
        Email
        <input name="email" type="email" value={email} onChange={(e) => setEmail(e.target.value)} />
      </label>
      <button type="submit" disabled={create.isPending}>
        {create.isPending ? 'Creating…' : 'Create user'}
      </button>
      <ErrorNote error={create.error} id="user-create-error" />
    </form>
  );
}

/** The grant form: a role to a user on a project. */
function GrantRole({ onGranted }: { onGranted: () => Promise<void> }): ReactNode {
  const users = useUsers();
  const projects = useProjects();
  const roles = useRoles();
  const [user, setUser] = useState('');
  const [project, setProject] = useState('');
  const [role, setRole] = useState('');
  const grant = useMutation({
    mutationFn: async () => call('PUT', `/identity/v3/projects/${project}/users/${user}/roles/${role}`),
    onSuccess: onGranted,
  });
  return (
    <form
      className="inline-form"
      aria-label="Grant a role"
      aria-describedby={grant.isError ? 'grant-error' : undefined}
      onSubmit={(e: FormEvent) => {
        e.preventDefault();
        grant.mutate();
      }}
    >
      <label>
        Role
        <select name="role" required value={role} onChange={(e) => setRole(e.target.value)}>
          <option value="">choose…</option>
          {(roles.data ?? []).map((r) => (
            <option key={r.id} value={r.id}>
              {r.name}
            </option>
          ))}
        </select>
      </label>
      <label>
        User
        <select name="user" required value={user} onChange={(e) => setUser(e.target.value)}>
          <option value="">choose…</option>
          {(users.data ?? []).map((u) => (
            <option key={u.id} value={u.id}>
              {u.name}
            </option>
          ))}
        </select>
      </label>
      <label>
        Project
        <select name="project" required value={project} onChange={(e) => setProject(e.target.value)}>
          <option value="">choose…</option>
          {(projects.data ?? []).map((p) => (
            <option key={p.id} value={p.id}>
              {p.name}
            </option>
          ))}
        </select>
      </label>
      <button type="submit" disabled={grant.isPending}>
        {grant.isPending ? 'Granting…' : 'Grant role'}
      </button>
      <ErrorNote error={grant.error} id="grant-error" />
    </form>
  );
}

/** The URL of a user's assignment, for revoke (null: not revocable here). */
function assignmentUrl(a: Assignment): string | null {
  if (!a.user) return null;
  if (a.scope.project) return `/identity/v3/projects/${a.scope.project.id}/users/${a.user.id}/roles/${a.role.id}`;
  if (a.scope.system) return `/identity/v3/system/users/${a.user.id}/roles/${a.role.id}`;
  return null;
}

/** The role assignments table with the grant form. */
function Assignments(): ReactNode {
  const qc = useQueryClient();
  const assignments = useQuery({
    queryKey: ['admin', 'role-assignments'],
    queryFn: async ({ signal }) =>
      (await get<{ role_assignments: Assignment[] }>('/identity/v3/role_assignments?include_names=true', signal)).role_assignments,
  });
  const refresh = async (): Promise<void> => qc.invalidateQueries({ queryKey: ['admin', 'role-assignments'] });
  const revoke = useMutation({ mutationFn: async (url: string) => call('DELETE', url), onSuccess: refresh });
  return (
    <>
      <GrantRole onGranted={refresh} />
      <ErrorNote error={assignments.error ?? revoke.error} />
      <table className="grid" aria-busy={assignments.isPending} aria-label="Role assignments">
        <thead>
          <tr>
            <th scope="col">User or group</th>
            <th scope="col">Role</th>
            <th scope="col">Scope</th>
            <th scope="col">
              <span className="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {assignments.isPending ? (
            <LoadingRows columns={4} />
          ) : (
            (assignments.data ?? []).map((a) => {
              const who = a.user ? (a.user.name ?? a.user.id) : `group ${a.group?.name ?? a.group?.id ?? '?'}`;
              const scope = a.scope.project
                ? `project ${a.scope.project.name ?? a.scope.project.id}`
                : a.scope.system
                  ? 'system'
                  : `domain ${a.scope.domain?.name ?? a.scope.domain?.id ?? '?'}`;
              const url = assignmentUrl(a);
              const role = a.role.name ?? a.role.id;
              return (
                <tr key={`${who}|${role}|${scope}`} data-assignment={`${who} ${role} ${scope}`}>
                  <td>{who}</td>
                  <td data-label="Role">{role}</td>
                  <td data-label="Scope">{scope}</td>
                  <td>
                    {url ? (
                      <ConfirmButton
                        label="Revoke"
                        what={`role ${role} of ${who} on ${scope}`}
                        disabled={revoke.isPending}
                        onConfirm={() => revoke.mutate(url)}
                      />
                    ) : null}
                  </td>
                </tr>
              );
            })
          )}
        </tbody>
      </table>
    </>
  );
}

/** The users page. */
export function Users(): ReactNode {
  const qc = useQueryClient();
  const users = useUsers();
  const projects = useProjects();
  const name = projectNamer(projects.data);
  const remove = useMutation({
    mutationFn: async (id: string) => call('DELETE', `/identity/v3/users/${id}`),
    onSuccess: async () => {
      await qc.invalidateQueries({ queryKey: ['admin', 'users'] });
      await qc.invalidateQueries({ queryKey: ['admin', 'role-assignments'] });
    },
  });
  return (
    <main className="admin">
      <PageHeader title="Users and roles" />
      <h2>New user</h2>
      <CreateUser />
      <h2>All users</h2>
      <ErrorNote error={users.error ?? remove.error} />
      <table className="grid" aria-busy={users.isPending} aria-label="Users">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Default project</th>
            <th scope="col">Email</th>
            <th scope="col">ID</th>
            <th scope="col">
              <span className="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {users.isPending ? (
            <LoadingRows columns={5} />
          ) : (
            (users.data ?? []).map((u) => (
              <tr key={u.id} data-user={u.name}>
                <td>
                  {u.name}
                  {u.enabled ? null : <span className="badge plain">disabled</span>}
                </td>
                <td data-label="Default project">{name(u.default_project_id)}</td>
                <td data-label="Email">{u.email ?? <span className="muted">—</span>}</td>
                <td className="mono">{u.id}</td>
                <td>
                  <ConfirmButton label="Delete" what={`user ${u.name}`} disabled={remove.isPending} onConfirm={() => remove.mutate(u.id)} />
                </td>
              </tr>
            ))
          )}
        </tbody>
      </table>
      <h2>Role assignments</h2>
      <Assignments />
    </main>
  );
}
