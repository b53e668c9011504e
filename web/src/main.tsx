/**
 * The dashboard's entry point: React Query (data fetching and caching; lists are refreshed by the
 * live channel, not by polling), React Router (a URL per view), the Keystone session.
 */
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { BrowserRouter } from 'react-router';
import { App } from './App.tsx';
import { ApiError } from './lib/api.ts';
import { SessionProvider } from './lib/session.tsx';
import './styles.css';

const queries = new QueryClient({
  defaultOptions: {
    queries: {
      // Changes arrive through the live channel: no refetch on focus or interval.
      staleTime: Infinity,
      refetchOnWindowFocus: false,
      retry: (count, error) => !(error instanceof ApiError && error.status < 500) && count < 2,
    },
  },
});

// The system's theme until the header's toggle chooses one (the sign-in page follows it too).
document.documentElement.dataset.theme = matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={queries}>
      <BrowserRouter>
        <SessionProvider>
          <App />
        </SessionProvider>
      </BrowserRouter>
    </QueryClientProvider>
  </StrictMode>,
);
