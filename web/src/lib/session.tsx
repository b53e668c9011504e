/**
 * Sign-in with Keystone (password; project or system scope) and the session that follows: the
 * token lives in this module's React state only (memory: a reload asks to sign in again; it is
 * never written to localStorage or a readable cookie). The session ends when the token expires
 * (a timer at `expires_at`), when any API answers 401, or on sign-out (the token is revoked with
 * `DELETE /identity/v3/auth/tokens`).
 */
import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { ApiError, call, setApiToken } from './api.ts';

/** The signed-in user as the token says. */
export interface Session {
  readonly token: string;
  readonly userId: string;
  readonly userName: string;
  /** The project of a project-scoped token, else null. */
  readonly project: { readonly id: string; readonly name: string } | null;
  /** True for a system-scoped token. */
  readonly system: boolean;
  readonly roles: readonly string[];
  /** UTC ISO-8601. */
  readonly expiresAt: string;
}

/** What a sign-in form sends. */
export interface Credentials {
  readonly user: string;
  readonly password: string;
  /** A project name, `''` for the user's default, or null for system scope. */
  readonly project: string | null;
}

interface SessionApi {
  readonly session: Session | null;
  /** Why the last session ended (expired, revoked), for the sign-in page. */
  readonly ended: string | null;
  signIn(c: Credentials): Promise<void>;
  /** Re-scope the current token to another project (by id) or to the system (null). */
  switchScope(projectId: string | null): Promise<void>;
  signOut(): Promise<void>;
}

const SessionContext = createContext<SessionApi | null>(null);

/** The session of the page (throws outside {@link SessionProvider}). */
export function useSession(): SessionApi {
  const s = useContext(SessionContext);
  if (s === null) throw new Error('useSession outside SessionProvider');
  return s;
}

/** True when the session may act as an administrator (admin role). */
export function isAdmin(s: Session | null): boolean {
  return s !== null && s.roles.includes('admin');
}

/** Keystone's token body as the dashboard reads it. */
interface TokenBody {
  token: {
    expires_at: string;
    user: { id: string; name: string };
    project?: { id: string; name: string };
    system?: { all: boolean };
    roles?: Array<{ name: string }>;
  };
}

async function issue(auth: unknown): Promise<Session> {
  const res = await call<TokenBody>('POST', '/identity/v3/auth/tokens', { body: { auth }, anonymous: true });
  const secret = res.headers.get('X-Subject-Token');
  if (secret === null) throw new ApiError(500, 'The identity service returned no token.');
  const t = res.body.token;
  return {
    token: secret,
    userId: t.user.id,
    userName: t.user.name,
    project: t.project ? { id: t.project.id, name: t.project.name } : null,
    system: t.system?.all === true,
    roles: (t.roles ?? []).map((r) => r.name),
    expiresAt: t.expires_at,
  };
}

/** Provides the session to the app. */
export function SessionProvider({ children }: { children: ReactNode }): ReactNode {
  const [session, setSession] = useState<Session | null>(null);
  const [ended, setEnded] = useState<string | null>(null);

  const end = useCallback((why: string) => {
    setSession(null);
    setEnded(why);
  }, []);

  setApiToken(session?.token ?? null, session ? () => end('Your session ended (the token expired or was revoked). Sign in again.') : null);

  useEffect(() => {
    if (session === null) return;
    const ms = Date.parse(session.expiresAt) - Date.now();
    const timer = setTimeout(() => end('Your session expired. Sign in again.'), Math.max(0, Math.min(ms, 2 ** 31 - 1)));
    return () => clearTimeout(timer);
  }, [session, end]);

  const signIn = useCallback(async (c: Credentials) => {
    const identity = { methods: ['password'], password: { user: { name: c.user, domain: { id: 'default' }, password: c.password } } };
    const scope =
      c.project === null
        ? { system: { all: true } }
        : c.project === ''
          ? undefined
          : { project: { name: c.project, domain: { id: 'default' } } };
    const s = await issue(scope === undefined ? { identity } : { identity, scope });
    setEnded(null);
    setSession(s);
  }, []);

  const switchScope = useCallback(
    async (projectId: string | null) => {
      if (session === null) return;
      const identity = { methods: ['token'], token: { id: session.token } };
      const scope = projectId === null ? { system: { all: true } } : { project: { id: projectId } };
      setSession(await issue({ identity, scope }));
    },
    [session],
  );

  const signOut = useCallback(async () => {
    if (session !== null) {
      try {
        await call('DELETE', '/identity/v3/auth/tokens', { headers: { 'X-Subject-Token': session.token } });
      } catch {
        // Signed out locally whatever the server says.
      }
    }
    setEnded(null);
    setSession(null);
  }, [session]);

  const value = useMemo(() => ({ session, ended, signIn, switchScope, signOut }), [session, ended, signIn, switchScope, signOut]);
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}
