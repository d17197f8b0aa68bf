import { useEffect, useRef, useState, useSyncExternalStore, type ReactNode } from 'react';
import { NavLink, useLocation, useNavigationType } from 'react-router-dom';
import { announcer } from '../announcer';
import { api } from '../api';
import { pageChange, type ShownPage } from '../page-focus';
import { useSession } from '../session';
import { slug } from './ui';

interface NavItem {
  to: string;
  label: string;
}

const CUSTOMER_NAV: Array<{ heading: string; items: NavItem[] }> = [
  {
    heading: 'Account',
    items: [
      { to: '/', label: 'Overview' },
      { to: '/api-keys', label: 'API keys' },
    ],
  },
  {
    heading: 'Products',
    items: [
      { to: '/node-access', label: 'Node access' },
      { to: '/webhooks', label: 'Webhooks' },
      { to: '/address-lists', label: 'Address lists' },
      { to: '/address-audit', label: 'Address Audit' },
    ],
  },
  {
    heading: 'Billing',
    items: [
      { to: '/plan', label: 'Plan' },
      { to: '/top-up', label: 'Top up' },
      { to: '/team', label: 'Team' },
      { to: '/settings', label: 'Settings' },
    ],
  },
];

const OPERATOR_NAV: Array<{ heading: string; items: NavItem[] }> = [
  {
    heading: 'Operator',
    items: [
      { to: '/operator/accounts', label: 'Accounts' },
      { to: '/operator/settings', label: 'Sign-up and invitations' },
      { to: '/settings', label: 'Password' },
    ],
  },
];

/** Sidebar navigation (a drawer on narrow screens), a skip link, and the page. */
export function Layout(props: { children: ReactNode }) {
  const { session, signedOut } = useSession();
  const [open, setOpen] = useState(false);
  const location = useLocation();
  const navigationType = useNavigationType();
  const main = useRef<HTMLElement>(null);
  const sidebar = useRef<HTMLElement>(null);
  const shown = useRef<ShownPage | null>(null);
  const nav = session.user?.role === 'operator' ? OPERATOR_NAV : CUSTOMER_NAV;
  // A new page takes the focus (page-focus.ts): its h1, or the main region until a page that
  // loads first renders its h1 (PageHeader then moves the focus on to it).
  useEffect(() => {
    const change = pageChange(shown.current, location.pathname, navigationType);
    shown.current = change.shown;
    if (!change.moveFocus || !main.current) return;
    (main.current.querySelector<HTMLElement>('h1') ?? main.current).focus();
  }, [location.pathname, navigationType]);
  // The drawer just opened is next for the keyboard (QA: Tab went on to Sign out, past it):
  // its first link takes the focus.
  useEffect(() => {
    if (open) sidebar.current?.querySelector<HTMLElement>('a')?.focus();
  }, [open]);
  // Escape closes the drawer and gives the focus back to its button, as a menu does.
  useEffect(() => {
    if (!open) return;
    const onKey = (event: KeyboardEvent) => {
      if (event.key !== 'Escape') return;
      setOpen(false);
      document.querySelector<HTMLElement>('.menu-button')?.focus();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [open]);
  // Whatever the server answers (204, or 401 when the session already ended elsewhere), the
  // page ends on the sign-in screen.
  const signOut = async () => {
    try {
      await api('POST', '/api/auth/sign-out');
    } catch {
      // nothing to tell: signed out either way
    }
    signedOut();
  };
  return (
    <div className="shell">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <button
          type="button"
          className="menu-button"
          aria-expanded={open}
          aria-controls="sidebar"
          onClick={() => setOpen(!open)}
        >
          Menu
        </button>
        <span className="brand">
          <span className="brand-mark" aria-hidden="true">
            ◆
          </span>{' '}
          Meridian
        </span>
        <span className="topbar-user">
          <span className="muted" data-testid="signed-in-as">
            {session.user?.email}
          </span>
          {session.user?.role === 'operator' && <span className="badge badge-warn">operator</span>}
          <button
            type="button"
            className="button button-secondary button-small"
            onClick={() => void signOut()}
          >
            Sign out
          </button>
        </span>
      </header>
      <nav
        id="sidebar"
        ref={sidebar}
        className={`sidebar ${open ? 'sidebar-open' : ''}`}
        aria-label="Main"
      >
        {/* Group titles are not headings: before the page's h1 they put three h2s first on
            every page (QA); each names its list instead. */}
        {nav.map((group) => (
          <div key={group.heading} className="nav-group">
            <div className="nav-heading" id={`nav-${slug(group.heading)}`}>
              {group.heading}
            </div>
            <ul aria-labelledby={`nav-${slug(group.heading)}`}>
              {group.items.map((item) => (
                <li key={item.to}>
                  <NavLink
                    to={item.to}
                    end={item.to === '/'}
                    onClick={() => setOpen(false)}
                    className={({ isActive }) => (isActive ? 'nav-link active' : 'nav-link')}
                  >
                    {item.label}
                  </NavLink>
                </li>
              ))}
            </ul>
          </div>
        ))}
      </nav>
      <main id="main" ref={main} className="content" key={location.pathname} tabIndex={-1}>
        {props.children}
      </main>
      <Announcements />
    </div>
  );
}

/** The page's polite live region (announcer.ts): there from the first render, not seen. */
function Announcements() {
  const text = useSyncExternalStore(announcer.subscribe, announcer.snapshot);
  return (
    <p className="visually-hidden" role="status" aria-live="polite" data-testid="announcement">
      {text}
    </p>
  );
}
