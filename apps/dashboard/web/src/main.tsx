import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { BrowserRouter } from 'react-router-dom';
import { ApiError, setOutcomeUnknownHandler } from './api';
import { App } from './app';
import { OutcomeChecks } from './outcome-unknown';
import './styles.css';
import { retryRead } from './waits';

const client = new QueryClient({
  defaultOptions: {
    queries: {
      // Once, after a fast failure only: a 4xx will not change by asking again, a timed-out API
      // would only time out again (waits.ts: the total wait is bounded).
      retry: (count, error) => retryRead(count, error instanceof ApiError ? error : undefined),
      refetchOnWindowFocus: false,
    },
  },
});

// A write that may have been applied though it failed: what the page shows is asked for again
// until it shows the outcome (outcome-unknown.ts; QA M5).
const outcomeChecks = new OutcomeChecks(() => void client.invalidateQueries());
setOutcomeUnknownHandler(() => outcomeChecks.start());

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={client}>
      <BrowserRouter>
        <App />
      </BrowserRouter>
    </QueryClientProvider>
  </StrictMode>,
);
