import { useEffect, useState, type ReactNode } from 'react';
import { NavLink, useLocation } from 'react-router-dom';
import { api } from '../api';
import { useSession } from '../session';

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
  const nav = session.user?.role === 'operator' ? OPERATOR_NAV : CUSTOMER_NAV;
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
      <nav id="sidebar" className={`sidebar ${open ? 'sidebar-open' : ''}`} aria-label="Main">
        {nav.map((group) => (
          <div key={group.heading} className="nav-group">
            <h2 className="nav-heading">{group.heading}</h2>
            <ul>
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
      <main id="main" className="content" key={location.pathname} tabIndex={-1}>
        {props.children}
      </main>
    </div>
  );
}
