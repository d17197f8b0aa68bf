import { useEffect, useRef, useState, useSyncExternalStore, type ReactNode } from 'react';
import { Link } from 'react-router-dom';
import { ApiError, requestsInFlight } from '../api';
import { FAILED_LOAD_MIN_GAP_MS, failedLoadBackoff } from '../auto-refresh';
import { pageTitle } from '../page-title';
import { useAutoRefresh } from '../use-auto-refresh';
import { slowWaits } from '../waits';

/** Sets the browser tab's title while the page is shown. */
export function usePageTitle(title: string | undefined): void {
  useEffect(() => {
    document.title = pageTitle(title);
  }, [title]);
}

/**
 * The page's title and h1. The h1 takes the focus after a page change (Layout, page-focus.ts);
 * a page that renders it only once loaded finds the main region focused meanwhile, and moves
 * the focus on to its h1 here.
 */
export function PageHeader(props: { title: string; description?: string; actions?: ReactNode }) {
  usePageTitle(props.title);
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    const h1 = heading.current;
    if (h1 && document.activeElement !== null && document.activeElement === h1.closest('main'))
      h1.focus();
  }, []);
  return (
    <header className="page-header">
      <div>
        <h1 ref={heading} tabIndex={-1}>
          {props.title}
        </h1>
        {props.description && <p className="muted">{props.description}</p>}
      </div>
      {props.actions && <div className="page-actions">{props.actions}</div>}
    </header>
  );
}

export function Card(props: {
  title?: string;
  children: ReactNode;
  actions?: ReactNode;
  className?: string;
  labelledBy?: string;
}) {
  const id = props.labelledBy ?? (props.title ? `card-${slug(props.title)}` : undefined);
  return (
    <section className={`card ${props.className ?? ''}`} aria-labelledby={id}>
      {(props.title || props.actions) && (
        <div className="card-header">
          {props.title && <h2 id={id}>{props.title}</h2>}
          {props.actions}
        </div>
      )}
      {props.children}
    </section>
  );
}

/**
 * Moves the focus to the heading of the card (section) holding `from`: where it lands after
 * what had it went away (a deleted row's button, a dismissed secret). The heading takes the
 * focus without entering the Tab order (tabindex -1), as the page's h1 does.
 */
export function focusSectionHeading(from: Element | null | undefined): void {
  const heading = from?.closest('section')?.querySelector<HTMLElement>('h2');
  if (!heading) return;
  if (!heading.hasAttribute('tabindex')) heading.setAttribute('tabindex', '-1');
  heading.focus();
}

export const slug = (text: string) => text.toLowerCase().replace(/[^a-z0-9]+/g, '-');

/**
 * Loading; after a few seconds (SLOW_AFTER_MS) it says it is taking long, what it waits for
 * (the API of the slowest request in flight) and for how long (waits.ts bounds the wait).
 */
export function Loading(props: { label?: string }) {
  useSyncExternalStore(requestsInFlight.subscribe, requestsInFlight.snapshot);
  const [since] = useState(() => Date.now());
  const [now, setNow] = useState(since);
  useEffect(() => {
    const timer = window.setInterval(() => setNow(Date.now()), 1_000);
    return () => window.clearInterval(timer);
  }, []);
  const slowWaited = slowWaits(requestsInFlight, now - since, now);
  const slow = slowWaited !== null;
  const waits = slowWaited ?? [];
  return (
    <div className="state" role="status" aria-live="polite" data-testid="loading">
      <span className="spinner" aria-hidden="true" />
      {props.label ?? 'Loading…'}
      {slow && (
        <span className="muted" data-testid="loading-slow">
          {' '}
          Taking longer than usual: still waiting for{' '}
          {waits.length > 0 ? waits.map((w) => w.what).join(' and ') : 'the server'}
          {waits.length > 0 && (
            <span aria-hidden="true"> ({Math.round(waits[0]!.ms / 1000)} s)</span>
          )}
          .
        </span>
      )}
    </div>
  );
}

/**
 * A failed load, with Try again; with a retry it is also asked again on its own (after a
 * backoff, and on focus or a shown tab: `failedLoadBackoff`), so the page recovers by itself
 * once its API answers. A refusal (4xx) is not asked again on a schedule.
 */
export function ErrorState(props: { error: unknown; retry?: () => void }) {
  const [backoff] = useState(failedLoadBackoff);
  useAutoRefresh({
    refresh: async () => props.retry?.(),
    // A refusal (4xx: not found, signed out) says the same when asked again: only Try again.
    nextDelay:
      props.retry &&
      !(props.error instanceof ApiError && props.error.status >= 400 && props.error.status < 500)
        ? backoff
        : null,
    policyKey: 'failed-load',
    minGapMs: FAILED_LOAD_MIN_GAP_MS,
  });
  const message =
    props.error instanceof ApiError
      ? props.error.message
      : props.error instanceof Error
        ? props.error.message
        : 'something went wrong';
  return (
    <div className="state state-error" role="alert">
      <strong>Could not load this.</strong> <span>{message}</span>
      {props.retry && (
        <button type="button" className="button button-secondary" onClick={props.retry}>
          Try again
        </button>
      )}
    </div>
  );
}

export function Empty(props: { title: string; children?: ReactNode }) {
  return (
    <div className="empty">
      <p className="empty-title">{props.title}</p>
      {props.children && <div className="muted">{props.children}</div>}
    </div>
  );
}

export function Badge(props: { tone?: 'ok' | 'warn' | 'bad' | 'neutral'; children: ReactNode }) {
  return <span className={`badge badge-${props.tone ?? 'neutral'}`}>{props.children}</span>;
}

export function Notice(props: { tone?: 'info' | 'warn' | 'bad' | 'ok'; children: ReactNode }) {
  return (
    <div
      className={`notice notice-${props.tone ?? 'info'}`}
      role={props.tone === 'bad' ? 'alert' : 'status'}
    >
      {props.children}
    </div>
  );
}

/**
 * A bar showing used of limit, labelled for screen readers; `summary`: the words beside the
 * label when "used of limit" would mislead.
 */
export function UsageBar(props: { label: string; used: number; limit: number; summary?: string }) {
  const ratio = props.limit > 0 ? Math.min(1, props.used / props.limit) : 0;
  const tone = ratio >= 1 ? 'bad' : ratio >= 0.8 ? 'warn' : 'ok';
  return (
    <div className="usage-bar">
      <div className="usage-bar-label">
        <span>{props.label}</span>
        <span className="muted">
          {props.summary ??
            `${props.used.toLocaleString('en-US')} of ${props.limit.toLocaleString('en-US')}`}
        </span>
      </div>
      <div
        className="usage-bar-track"
        role="progressbar"
        aria-label={props.label}
        aria-valuemin={0}
        aria-valuemax={props.limit}
        aria-valuenow={props.used}
      >
        <div className={`usage-bar-fill tone-${tone}`} style={{ width: `${ratio * 100}%` }} />
      </div>
    </div>
  );
}

/** A route the app does not have (QA: it went to Overview silently). */
export function NotFound(props: { home: string; homeLabel: string }) {
  return (
    <>
      <PageHeader title="Page not found" />
      <Card>
        <p data-testid="not-found">
          There is no page at <code>{window.location.pathname}</code>. It may have moved, or the
          link may be mistyped.
        </p>
        <Link className="button" to={props.home}>
          {props.homeLabel}
        </Link>
      </Card>
    </>
  );
}
