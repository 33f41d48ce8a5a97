import type { ComponentChildren } from 'preact';
import { ApiError } from '../api.js';
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
