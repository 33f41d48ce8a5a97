import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import {
  IconExternal,
  IconLogOut,
  IconMailbox,
  IconMenu,
  IconClose,
  IconOverview,
  IconReport,
  IconTemplate,
  IconKey,
  IconAlert,
  IconGlobe,
} from './icons.js';
import { Link } from './ui.js';
import { useIsAdmin } from '../access.js';
import { ViewOnlyNotice } from './view-only.js';
import type { SessionInfo } from '../api.js';

const NAV = [
  { to: '/', label: 'Overview', icon: IconOverview, match: (path: string) => path === '/' },
  { to: '/mailboxes', label: 'Mailboxes', icon: IconMailbox, match: (path: string) => path.startsWith('/mailboxes') },
  { to: '/templates', label: 'Templates', icon: IconTemplate, match: (path: string) => path.startsWith('/templates') },
  { to: '/reports', label: 'Reports', icon: IconReport, match: (path: string) => path.startsWith('/reports') },
  {
    to: '/placement-tests',
    label: 'Placement tests',
    icon: IconReport,
    match: (path: string) => path.startsWith('/placement-tests'),
  },
  { to: '/domains', label: 'Domains', icon: IconGlobe, match: (path: string) => path.startsWith('/domains') },
  { to: '/alerts', label: 'Alerts', icon: IconAlert, match: (path: string) => path.startsWith('/alerts') },
  {
    to: '/webhooks',
    label: 'Webhooks',
    icon: IconExternal,
    match: (path: string) => path.startsWith('/webhooks'),
    admin: true,
  },
  { to: '/team', label: 'Team', icon: IconKey, match: (path: string) => path.startsWith('/team'), admin: true },
];

/** The workspaces of a signed-in person, to switch between them (shown with two or more). */
function WorkspaceSwitcher({
  workspaces,
  current,
  onSwitch,
}: {
  workspaces: SessionInfo['workspaces'];
  current: string | undefined;
  onSwitch: (workspaceId: string) => void;
}) {
  return (
    <div class="field workspace-switcher">
      <label for="workspace-switcher">Workspace</label>
      <select
        id="workspace-switcher"
        class="input select"
        value={current}
        onChange={(event) => onSwitch((event.currentTarget as HTMLSelectElement).value)}
      >
        {workspaces.map((workspace) => (
          <option key={workspace.id} value={workspace.id}>
            {workspace.name}
          </option>
        ))}
      </select>
    </div>
  );
}

export function Logo() {
  return (
    <span class="logo">
      <svg width="28" height="28" viewBox="0 0 32 32" aria-hidden="true">
        <rect width="32" height="32" rx="8" fill="#3b5bdb" />
        <rect x="7" y="9" width="18" height="14" rx="2.5" fill="none" stroke="#fff" stroke-width="2.2" />
        <path
          d="M7 12.5 16 18l9-5.5"
          fill="none"
          stroke="#fff"
          stroke-width="2.2"
          stroke-linecap="round"
          stroke-linejoin="round"
        />
      </svg>
      <span class="logo-text">Warmup</span>
    </span>
  );
}

/** The frame of every signed-in page: navigation (a sidebar, or a menu on a phone) and the main area. */
export function Shell({
  path,
  workspace,
  person,
  workspaces,
  currentWorkspaceId,
  onSwitchWorkspace,
  onSignOut,
  children,
  focusOnStart,
}: {
  path: string;
  workspace: string | undefined;
  /** The signed-in person's name (none for an API key). */
  person?: string;
  /** A signed-in person's workspaces, for the switcher. */
  workspaces?: SessionInfo['workspaces'];
  currentWorkspaceId?: string;
  onSwitchWorkspace?: (workspaceId: string) => void;
  onSignOut: () => void;
  children: ComponentChildren;
  /** Focus the page at once (just signed in: the focused sign-in button is gone). */
  focusOnStart?: boolean;
}) {
  const [menuOpen, setMenuOpen] = useState(false);
  const admin = useIsAdmin();
  const main = useRef<HTMLElement>(null);
  const first = useRef(true);

  useEffect(() => {
    if (!menuOpen) return;
    const onKey = (event: KeyboardEvent) => {
      if (event.key === 'Escape') setMenuOpen(false);
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [menuOpen]);

  useEffect(() => {
    setMenuOpen(false);
    // After an in-app navigation, start keyboard and screen-reader users at the new page; on the
    // first render too right after signing in, whose form (and focused button) is gone.
    if (first.current && !focusOnStart) first.current = false;
    else {
      first.current = false;
      main.current?.focus({ preventScroll: true });
    }
  }, [path]);

  return (
    <div class={`shell ${menuOpen ? 'menu-open' : ''}`}>
      <a href="#main" class="skip-link">
        Skip to content
      </a>
      <header class="topbar">
        <Link to="/" class="brand-link" aria-label="Warmup overview">
          <Logo />
        </Link>
        <button
          type="button"
          class="icon-button menu-button"
          aria-expanded={menuOpen ? 'true' : 'false'}
          aria-controls="primary-nav"
          onClick={() => setMenuOpen(!menuOpen)}
        >
          {menuOpen ? <IconClose size={22} /> : <IconMenu size={22} />}
          <span class="visually-hidden">{menuOpen ? 'Close menu' : 'Open menu'}</span>
        </button>
      </header>
      <aside class="sidebar" id="primary-nav">
        <div class="sidebar-inner">
          <Link to="/" class="brand-link sidebar-brand" aria-label="Warmup overview">
            <Logo />
          </Link>
          <nav aria-label="Main">
            <ul class="nav-list">
              {NAV.filter((item) => admin || !item.admin).map((item) => {
                const current = item.match(path);
                return (
                  <li key={item.to}>
                    <Link
                      to={item.to}
                      class={`nav-link ${current ? 'active' : ''}`}
                      aria-current={current ? 'page' : undefined}
                    >
                      <item.icon size={19} />
                      {item.label}
                    </Link>
                  </li>
                );
              })}
            </ul>
          </nav>
          <div class="sidebar-footer">
            {workspaces && workspaces.length > 1 && onSwitchWorkspace ? (
              <WorkspaceSwitcher workspaces={workspaces} current={currentWorkspaceId} onSwitch={onSwitchWorkspace} />
            ) : (
              <div class="workspace">
                <span class="workspace-label">Workspace</span>
                <span class="workspace-name" title={workspace}>
                  {workspace ?? '…'}
                </span>
              </div>
            )}
            {person && (
              <Link to="/account" class="nav-link subtle">
                Signed in as {person}
              </Link>
            )}
            <a class="nav-link subtle" href="/docs" target="_blank" rel="noopener">
              API reference
            </a>
            <button type="button" class="nav-link subtle sign-out" onClick={onSignOut}>
              <IconLogOut size={18} />
              Sign out
            </button>
          </div>
        </div>
      </aside>
      <main id="main" ref={main} tabIndex={-1} class="main">
        <div class="content">
          <ViewOnlyNotice />
          {children}
        </div>
      </main>
    </div>
  );
}
