/**
 * The dashboard's shell: routes (every view has its URL under `/dashboard/`), the navigation,
 * the signed-in user with a project switcher, the theme toggle, and the live channel's banner.
 */
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState, type ReactNode } from 'react';
import { Navigate, NavLink, Route, Routes, useLocation } from 'react-router';
import { get } from './lib/api.ts';
import { runLive, type LiveState } from './lib/live.ts';
import { isAdmin, useSession } from './lib/session.tsx';
import { AdminNodes } from './pages/admin/AdminNodes.tsx';
import { Conductors } from './pages/admin/Conductors.tsx';
import { NodeHistory } from './pages/admin/NodeHistory.tsx';
import { Projects } from './pages/admin/Projects.tsx';
import { Quotas } from './pages/admin/Quotas.tsx';
import { Switches } from './pages/admin/Switches.tsx';
import { Users } from './pages/admin/Users.tsx';
import { Leases } from './pages/Leases.tsx';
import { Activity } from './pages/owner/Activity.tsx';
import { Enrol } from './pages/owner/Enrol.tsx';
import { MyOffers } from './pages/owner/MyOffers.tsx';
import { Schedule } from './pages/owner/Schedule.tsx';
import { NodeDetail } from './pages/NodeDetail.tsx';
import { Nodes } from './pages/Nodes.tsx';
import { Offers } from './pages/Offers.tsx';
import { SignIn } from './pages/SignIn.tsx';
import { Images } from './pages/lessee/Images.tsx';
import { Networks } from './pages/lessee/Networks.tsx';

/** Light or dark; follows the system until chosen (the choice lasts for the page's life). */
function ThemeToggle(): ReactNode {
  const [theme, setTheme] = useState<'light' | 'dark'>(() => (matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light'));
  useEffect(() => {
    document.documentElement.dataset.theme = theme;
  }, [theme]);
  return (
    <button
      type="button"
      className="ghost"
      onClick={() => setTheme(theme === 'dark' ? 'light' : 'dark')}
      aria-label={`Switch to ${theme === 'dark' ? 'light' : 'dark'} theme`}
    >
      {theme === 'dark' ? '☀' : '☾'}
    </button>
  );
}

/** The projects the user may switch to, and the system scope for admins. */
function ScopeSwitcher(): ReactNode {
  const { session, switchScope } = useSession();
  const projects = useQuery({
    queryKey: ['auth-projects', session?.userId],
    queryFn: async ({ signal }) =>
      (await get<{ projects: Array<{ id: string; name: string }> }>('/identity/v3/auth/projects', signal)).projects,
    enabled: session !== null,
  });
  if (session === null) return null;
  const value = session.system ? 'system' : (session.project?.id ?? '');
  return (
    <label className="scope">
      <span className="sr-only">Project</span>
      <select value={value} onChange={(e) => void switchScope(e.target.value === 'system' ? null : e.target.value)}>
        {session.project && !(projects.data ?? []).some((p) => p.id === session.project?.id) ? (
          <option value={session.project.id}>{session.project.name}</option>
        ) : null}
        {(projects.data ?? []).map((p) => (
          <option key={p.id} value={p.id}>
            {p.name}
          </option>
        ))}
        {session.roles.includes('admin') || session.system ? <option value="system">System (all projects)</option> : null}
      </select>
    </label>
  );
}

/** Keeps the live channel open while signed in; shows a banner when it is lost. */
function LiveBanner(): ReactNode {
  const { session, signOut } = useSession();
  const qc = useQueryClient();
  const [state, setState] = useState<LiveState>('connecting');
  useEffect(() => {
    if (session === null) return;
    const stop = new AbortController();
    void runLive(qc, session.token, stop.signal, setState, () => void signOut());
    return () => stop.abort();
  }, [session, qc, signOut]);
  if (state !== 'lost') return null;
  return (
    <div className="banner" role="status">
      Connection to esi lost — reconnecting…
    </div>
  );
}

/** The signed-in frame: header, navigation, the page. */
function Shell({ children }: { children: ReactNode }): ReactNode {
  const { session, signOut } = useSession();
  const location = useLocation();
  if (session === null) return <Navigate to="/dashboard/sign-in" replace state={{ from: location.pathname + location.search }} />;
  return (
    <div className="shell">
      <a className="skip" href="#content">
        Skip to content
      </a>
      <header className="top">
        <strong className="brand">esi</strong>
        <nav aria-label="Main">
          <NavLink to="/dashboard/offers" end>
            Marketplace
          </NavLink>
          <NavLink to="/dashboard/leases">Leases</NavLink>
          <NavLink to="/dashboard/nodes">Nodes</NavLink>
          <NavLink to="/dashboard/networks">Networks</NavLink>
          <NavLink to="/dashboard/images">Images</NavLink>
          <NavLink to="/dashboard/nodes/new">Enrol</NavLink>
          <NavLink to="/dashboard/offers/mine">My offers</NavLink>
          <NavLink to="/dashboard/schedule">Schedule</NavLink>
          <NavLink to="/dashboard/events">Events</NavLink>
        </nav>
        <div className="who">
          <span title={session.userId}>{session.userName}</span>
          <ScopeSwitcher />
          <ThemeToggle />
          <button type="button" className="ghost" onClick={() => void signOut()}>
            Sign out
          </button>
        </div>
      </header>
      {isAdmin(session) || session.system ? (
        <nav className="admin-nav" aria-label="Admin">
          <span className="admin-nav-title" aria-hidden="true">
            Admin
          </span>
          <NavLink to="/dashboard/admin/projects">Projects</NavLink>
          <NavLink to="/dashboard/admin/users">Users and roles</NavLink>
          <NavLink to="/dashboard/admin/quotas">Quotas</NavLink>
          <NavLink to="/dashboard/admin/nodes">All nodes</NavLink>
          <NavLink to="/dashboard/admin/conductors">Conductors</NavLink>
          <NavLink to="/dashboard/admin/switches">Switches</NavLink>
        </nav>
      ) : null}
      <LiveBanner />
      <div id="content">{children}</div>
    </div>
  );
}

/** The operator's views (the API decides who may read them; the nav shows them to admins). */
const ADMIN_ROUTES: ReadonlyArray<readonly [string, ReactNode]> = [
  ['/dashboard/admin/projects', <Projects />],
  ['/dashboard/admin/users', <Users />],
  ['/dashboard/admin/quotas', <Quotas />],
  ['/dashboard/admin/nodes', <AdminNodes />],
  ['/dashboard/admin/nodes/:id/history', <NodeHistory />],
  ['/dashboard/admin/conductors', <Conductors />],
  ['/dashboard/admin/switches', <Switches />],
];

/** The routes. */
export function App(): ReactNode {
  return (
    <Routes>
      <Route path="/dashboard/sign-in" element={<SignIn />} />
      <Route
        path="/dashboard/nodes"
        element={
          <Shell>
            <Nodes />
          </Shell>
        }
      />
      <Route
        path="/dashboard/nodes/:id"
        element={
          <Shell>
            <NodeDetail />
          </Shell>
        }
      />
      <Route
        path="/dashboard/offers"
        element={
          <Shell>
            <Offers />
          </Shell>
        }
      />
      <Route
        path="/dashboard/leases"
        element={
          <Shell>
            <Leases />
          </Shell>
        }
      />
      {ADMIN_ROUTES.map(([path, page]) => (
        <Route key={path} path={path} element={<Shell>{page}</Shell>} />
      ))}
      <Route
        path="/dashboard/nodes/new"
        element={
          <Shell>
            <Enrol />
          </Shell>
        }
      />
      <Route
        path="/dashboard/offers/mine"
        element={
          <Shell>
            <MyOffers />
          </Shell>
        }
      />
      <Route
        path="/dashboard/schedule"
        element={
          <Shell>
            <Schedule />
          </Shell>
        }
      />
      <Route
        path="/dashboard/events"
        element={
          <Shell>
            <Activity />
          </Shell>
        }
      />
      <Route
        path="/dashboard/networks"
        element={
          <Shell>
            <Networks />
          </Shell>
        }
      />
      <Route
        path="/dashboard/images"
        element={
          <Shell>
            <Images />
          </Shell>
        }
      />
      <Route path="*" element={<Navigate to="/dashboard/nodes" replace />} />
    </Routes>
  );
}
