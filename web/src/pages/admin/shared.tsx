/**
 * What the operator's (admin) views share: the Keystone lists they all read
 * (`GET /identity/v3/projects`, `/users`, `/roles`), a lookup of project names, and a delete
 * button that asks to be pressed twice (no browser dialog: keyboard and screen readers see one
 * button whose label says what the second press does).
 */
import { useQuery } from '@tanstack/react-query';
import { useState, type ReactNode } from 'react';
import { get } from '../../lib/api.ts';
import './admin.css';

/** A Keystone project as the admin views read it. */
export interface Project {
  id: string;
  name: string;
  description: string;
  parent_id: string | null;
  domain_id: string;
  enabled: boolean;
}

/** A Keystone user as the admin views read it (`email` is an extra attribute). */
export interface User {
  id: string;
  name: string;
  domain_id: string;
  enabled: boolean;
  default_project_id?: string;
  email?: string;
}

/** A Keystone role. */
export interface Role {
  id: string;
  name: string;
}

/** All projects (`GET /identity/v3/projects`). */
export function useProjects() {
  return useQuery({
    queryKey: ['admin', 'projects'],
    queryFn: async ({ signal }) => (await get<{ projects: Project[] }>('/identity/v3/projects', signal)).projects,
  });
}

/** All users (`GET /identity/v3/users`). */
export function useUsers() {
  return useQuery({
    queryKey: ['admin', 'users'],
    queryFn: async ({ signal }) => (await get<{ users: User[] }>('/identity/v3/users', signal)).users,
  });
}

/** All roles (`GET /identity/v3/roles`). */
export function useRoles() {
  return useQuery({
    queryKey: ['admin', 'roles'],
    queryFn: async ({ signal }) => (await get<{ roles: Role[] }>('/identity/v3/roles', signal)).roles,
  });
}

/** A project's name by id (the id itself when unknown, `—` for none). */
export function projectNamer(projects: readonly Project[] | undefined): (id: string | null | undefined) => string {
  const names = new Map((projects ?? []).map((p) => [p.id, p.name]));
  return (id) => (id ? (names.get(id) ?? id) : '—');
}

/**
 * A button that acts on its second press: the first turns it into "Confirm …" (and focus stays
 * on it), a blur puts it back.
 */
export function ConfirmButton({
  label,
  what,
  onConfirm,
  disabled,
}: {
  label: string;
  /** What is acted on, for the accessible name (`Delete project p1`). */
  what: string;
  onConfirm: () => void;
  disabled?: boolean;
}): ReactNode {
  const [armed, setArmed] = useState(false);
  return (
    <button
      type="button"
      className="danger"
      disabled={disabled}
      aria-label={armed ? `Confirm ${label.toLowerCase()} ${what}` : `${label} ${what}`}
      onBlur={() => setArmed(false)}
      onClick={() => {
        if (!armed) return setArmed(true);
        setArmed(false);
        onConfirm();
      }}
    >
      {armed ? `Confirm ${label.toLowerCase()}` : label}
    </button>
  );
}
