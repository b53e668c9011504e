/** The sign-in page: Keystone user, password, and a project (or the system scope, for admins). */
import { useState, type FormEvent, type ReactNode } from 'react';
import { useLocation, useNavigate } from 'react-router';
import { useSession } from '../lib/session.tsx';
import { ErrorNote } from '../ui/common.tsx';

/** Sign in, then go back to the page that was asked for. */
export function SignIn(): ReactNode {
  const { signIn, ended } = useSession();
  const navigate = useNavigate();
  const location = useLocation();
  const [user, setUser] = useState('');
  const [password, setPassword] = useState('');
  const [project, setProject] = useState('');
  const [system, setSystem] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  async function submit(e: FormEvent): Promise<void> {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await signIn({ user, password, project: system ? null : project });
      const from = (location.state as { from?: string } | null)?.from;
      void navigate(from && from !== '/dashboard/sign-in' ? from : '/dashboard/nodes', { replace: true });
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <main className="sign-in">
      <form onSubmit={(e) => void submit(e)} aria-describedby={error ? 'sign-in-error' : undefined}>
        <h1>Sign in to esi</h1>
        {ended ? <p className="notice">{ended}</p> : null}
        <label>
          User
          <input name="user" autoComplete="username" required value={user} onChange={(e) => setUser(e.target.value)} />
        </label>
        <label>
          Password
          <input
            name="password"
            type="password"
            autoComplete="current-password"
            required
            value={password}
            onChange={(e) => setPassword(e.target.value)}
          />
        </label>
        <label>
          Project
          <input
            name="project"
            placeholder="your default project"
            disabled={system}
            value={project}
            onChange={(e) => setProject(e.target.value)}
          />
        </label>
        <label className="inline">
          <input type="checkbox" name="system" checked={system} onChange={(e) => setSystem(e.target.checked)} />
          System scope (operators)
        </label>
        <ErrorNote error={error} id="sign-in-error" />
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
