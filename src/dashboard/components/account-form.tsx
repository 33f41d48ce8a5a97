import type { ComponentChildren } from 'preact';
import { ApiError, api } from '../api.js';
import { useResource } from '../hooks.js';
import { Logo } from './shell.js';
import { Notice } from './ui.js';

/** The centred card of the pages before sign-in: first-run setup, sign-in, accepting an invite. */
export function AccountCard({
  title,
  lead,
  notice,
  children,
  help,
}: {
  title: string;
  lead?: ComponentChildren;
  notice?: string;
  children: ComponentChildren;
  help?: ComponentChildren;
}) {
  return (
    <div class="signin">
      <main class="signin-card" id="main">
        <Logo />
        <h1>{title}</h1>
        {lead && <p class="signin-lead">{lead}</p>}
        {notice && <Notice tone="warning">{notice}</Notice>}
        {children}
        {help && <div class="signin-help">{help}</div>}
      </main>
    </div>
  );
}

/** Field errors of a refused form by field name, and the message for the rest. */
export function formErrors(failure: unknown): { fields: Record<string, string>; message?: string } {
  if (failure instanceof ApiError) {
    const fields = failure.fieldErrors();
    return { fields, message: Object.keys(fields).length > 0 ? undefined : failure.message };
  }
  return { fields: {}, message: (failure as Error).message };
}

/**
 * A link that starts signing in through the operator's OpenID Connect provider, shown only when
 * one is set up. A navigation, not a fetch: the browser goes to the provider and comes back.
 */
export function OidcSignInLink({ invite, label }: { invite?: string; label: (provider: string) => string }) {
  const info = useResource(() => api.oidcSignIn(), []);
  if (!info.data?.enabled || !info.data.name) return null;
  const href = `/api/session/oidc/start${invite ? `?invite=${encodeURIComponent(invite)}` : ''}`;
  return (
    <div class="signin-alt">
      <span class="signin-or">or</span>
      <a class="btn btn-secondary btn-block" href={href}>
        {label(info.data.name)}
      </a>
    </div>
  );
}

/** Why a sign-in through the provider was refused, from the address it came back to (read once). */
export function takeOidcError(): string | undefined {
  const params = new URLSearchParams(window.location.search);
  const message = params.get('oidc_error');
  if (message === null) return undefined;
  params.delete('oidc_error');
  const rest = params.toString();
  window.history.replaceState(null, '', `${window.location.pathname}${rest ? `?${rest}` : ''}`);
  return message;
}
