import { useMemo, useState } from 'preact/hooks';
import type { MailboxCreate, ProviderPreset, ServerSettings } from '../api.js';
import { ApiError, api } from '../api.js';
import { IconExternal, IconLock } from '../components/icons.js';
import { OAuthConnectCard } from '../components/oauth-connect.js';
import { toast } from '../components/toasts.js';
import { Button, Card, ErrorBox, Link, Loading, Notice, PageHeader } from '../components/ui.js';
import { TextField } from '../components/fields.js';
import { DEFAULT_WARMUP } from '../../mailboxes/warmup-settings.js';
import { PROVIDER_NAMES } from '../format.js';
import { useResource, useTitle } from '../hooks.js';
import { navigate } from '../router.js';
import {
  ServerFields,
  WarmupFields,
  browserTimeZone,
  formErrors,
  fromDraft,
  toDraft,
  type ServerDraft,
  type WarmupDraft,
} from '../components/mailbox-settings.js';

type ProviderId = MailboxCreate['provider'];

/** A provider the form offers: the server's presets, plus `custom`, which has none. */
type ProviderChoice = Omit<ProviderPreset, 'id' | 'imap' | 'smtp' | 'helpUrl' | 'notes'> &
  Partial<Pick<ProviderPreset, 'imap' | 'smtp' | 'helpUrl' | 'notes'>> & { id: ProviderId };

const CUSTOM: ProviderChoice = {
  id: 'custom',
  name: 'Other (IMAP/SMTP)',
  appPasswordRequired: false,
  passwordLogin: true,
  oauthProvider: null,
};

// On the provider picker the custom choice reads as the alternative to the named providers.
const SHORT_NAMES: Record<string, string> = { ...PROVIDER_NAMES, custom: 'Other' };

function ProviderPicker({
  providers,
  value,
  onValue,
}: {
  providers: ProviderChoice[];
  value: ProviderId;
  onValue: (id: ProviderId) => void;
}) {
  return (
    <fieldset class="provider-picker">
      <legend>Provider</legend>
      <div class="provider-grid">
        {providers.map((provider) => (
          <label key={provider.id} class={`provider-option ${value === provider.id ? 'selected' : ''}`}>
            <input
              type="radio"
              name="provider"
              value={provider.id}
              checked={value === provider.id}
              onChange={() => onValue(provider.id)}
            />
            <span class={`provider-mark provider-${provider.id}`} aria-hidden="true">
              {(SHORT_NAMES[provider.id] ?? provider.name).slice(0, 1)}
            </span>
            <span class="provider-name">{SHORT_NAMES[provider.id] ?? provider.name}</span>
          </label>
        ))}
      </div>
    </fieldset>
  );
}

function summary(draft: WarmupDraft): string {
  return `Starts at ${draft.startVolume} a day, +${draft.rampUpIncrement} daily, up to ${draft.dailyLimit}; replies to ${draft.replyRate}%; ${draft.sendWindow.start}–${draft.sendWindow.end} ${draft.timezone}${draft.weekdaysOnly ? ', weekdays only' : ''}`;
}

export function AddMailboxPage() {
  useTitle('Add mailbox');
  const presets = useResource(() => api.providers(), []);
  const providers = useMemo((): ProviderChoice[] => [...(presets.data ?? []), CUSTOM], [presets.data]);

  const [provider, setProvider] = useState<ProviderId>('gmail');
  const [email, setEmail] = useState('');
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const [username, setUsername] = useState('');
  const [imap, setImap] = useState<ServerDraft>({ host: '', port: '993', secure: true });
  const [smtp, setSmtp] = useState<ServerDraft>({ host: '', port: '465', secure: true });
  const [draft, setDraft] = useState(() => toDraft({ ...DEFAULT_WARMUP, timezone: browserTimeZone() }));
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [failure, setFailure] = useState<{ title: string; error: Error }>();
  const [busy, setBusy] = useState(false);

  const preset = providers.find((p) => p.id === provider);
  const custom = provider === 'custom';
  const appPassword = preset?.appPasswordRequired ?? false;

  function server(draftServer: ServerDraft): ServerSettings {
    return {
      host: draftServer.host.trim(),
      port: Number(draftServer.port),
      secure: draftServer.secure,
      ...(username.trim() ? { username: username.trim() } : {}),
    };
  }

  /** Only what is missing: everything else the server checks, and its answer is shown in place. */
  function missingFields(): Record<string, string> {
    const missing: Record<string, string> = {};
    if (!email.trim()) missing.email = 'Enter the email address';
    if (!password) missing.password = appPassword ? 'Paste the app password' : 'Enter the password';
    if (custom) {
      if (!imap.host.trim()) missing['imap/host'] = 'Enter the IMAP server';
      if (!smtp.host.trim()) missing['smtp/host'] = 'Enter the SMTP server';
    }
    return missing;
  }

  async function submit(event: Event) {
    event.preventDefault();
    setFailure(undefined);
    const missing = missingFields();
    setErrors(missing);
    if (Object.keys(missing).length > 0) return;
    const body: MailboxCreate = {
      email: email.trim(),
      password,
      provider,
      connectionType: 'imap',
      ...(name.trim() ? { name: name.trim() } : {}),
      ...(custom ? { imap: server(imap), smtp: server(smtp) } : {}),
      warmup: fromDraft(draft),
    };
    setBusy(true);
    try {
      const mailbox = await api.createMailbox(body);
      toast(`${mailbox.email} is connected and warming up`);
      navigate(`/mailboxes/${encodeURIComponent(mailbox.id)}`);
    } catch (error) {
      setBusy(false);
      if (error instanceof ApiError && error.status === 422) {
        setFailure({ title: 'The mailbox could not connect', error });
      } else if (error instanceof ApiError && error.status === 409) {
        setErrors({ email: error.message });
      } else {
        const found = formErrors(error);
        setErrors(found.fields);
        if (found.general) setFailure({ title: 'The mailbox was not added', error: found.general });
      }
    }
  }

  return (
    <>
      <PageHeader
        title="Add a mailbox"
        subtitle="Connect over IMAP and SMTP. The login is checked before anything is saved."
        back={{ to: '/mailboxes', label: 'Mailboxes' }}
        actions={
          <Link to="/mailboxes/import" class="btn btn-secondary">
            Import many from CSV
          </Link>
        }
      />
      <OAuthConnectCard />
      <div class="form-layout">
        <form class="form-page" onSubmit={submit} noValidate aria-describedby={failure ? 'add-failure' : undefined}>
          <Card title="Mail provider">
            {presets.error ? (
              <ErrorBox error={presets.error} onRetry={presets.reload} title="Could not load the provider list" />
            ) : !presets.data ? (
              <Loading label="Loading providers" rows={2} />
            ) : (
              <ProviderPicker providers={providers} value={provider} onValue={setProvider} />
            )}
            {preset && !custom && (
              <div class="provider-help">
                {preset.imap && preset.smtp && (
                  <p class="muted">
                    Connects to <code>{preset.imap.host}</code> and <code>{preset.smtp.host}</code>.
                  </p>
                )}
                {appPassword && (
                  <Notice tone="info" title={`${preset.name} needs an app password`}>
                    <p>
                      {preset.notes ??
                        'Your normal password is refused for IMAP and SMTP; create an app password and paste it below.'}
                    </p>
                    {preset.helpUrl && (
                      <a href={preset.helpUrl} target="_blank" rel="noopener noreferrer" class="external-link">
                        How to create an app password <IconExternal size={14} />
                        <span class="visually-hidden">(opens in a new tab)</span>
                      </a>
                    )}
                  </Notice>
                )}
              </div>
            )}
          </Card>

          <Card title="Account">
            <div class="form-grid">
              <TextField
                label="Email address"
                name="email"
                type="email"
                autoComplete="off"
                spellcheck={false}
                placeholder="you@company.com"
                value={email}
                onValue={setEmail}
                error={errors.email}
                required
              />
              <TextField
                label="Sender name"
                name="name"
                placeholder="Jane Cooper"
                hint="Optional; shown as the sender"
                value={name}
                onValue={setName}
                error={errors.name}
              />
              <TextField
                class="span-all"
                label={appPassword ? 'App password' : 'Password'}
                name="password"
                type="password"
                autoComplete="new-password"
                value={password}
                onValue={setPassword}
                error={errors.password}
                hint={
                  appPassword
                    ? 'Spaces are ignored. Stored encrypted; never shown again.'
                    : 'Stored encrypted; never shown again.'
                }
                required
              />
            </div>
            {custom && (
              <>
                <ServerFields kind="imap" server={imap} onServer={setImap} errors={errors} />
                <ServerFields kind="smtp" server={smtp} onServer={setSmtp} errors={errors} />
                <details class="advanced">
                  <summary>Advanced</summary>
                  <div class="advanced-body">
                    <TextField
                      label="Username"
                      name="username"
                      hint="If the server's login is not the email address"
                      autoComplete="off"
                      spellcheck={false}
                      value={username}
                      onValue={setUsername}
                      error={errors['imap/username'] ?? errors['smtp/username']}
                    />
                  </div>
                </details>
              </>
            )}
          </Card>

          <Card title="Warmup">
            <details class="advanced warmup-details">
              <summary>
                <span>Warmup settings</span>
                <span class="summary-text">{summary(draft)}</span>
              </summary>
              <div class="advanced-body">
                <WarmupFields draft={draft} onDraft={setDraft} errors={errors} />
              </div>
            </details>
          </Card>

          <div class="form-footer">
            <div id="add-failure" aria-live="assertive">
              {failure && <ErrorBox error={failure.error} title={failure.title} />}
            </div>
            {busy && (
              <p class="muted" role="status">
                Signing in to IMAP and SMTP to check the account…
              </p>
            )}
            <div class="form-buttons">
              <Button variant="ghost" onClick={() => navigate('/mailboxes')} disabled={busy}>
                Cancel
              </Button>
              <Button type="submit" variant="primary" loading={busy}>
                {busy ? 'Verifying…' : 'Connect mailbox'}
              </Button>
            </div>
          </div>
        </form>
        <aside class="form-aside" aria-label="What happens next">
          <Card title="What happens next">
            <ol class="steps">
              <li>
                <div>
                  <strong>The login is checked</strong>
                  Warmup signs in to IMAP and SMTP once. Nothing is stored if the server refuses.
                </div>
              </li>
              <li>
                <div>
                  <strong>A gentle start</strong>A couple of real emails to other mailboxes of the network on day one, a
                  few more each day.
                </div>
              </li>
              <li>
                <div>
                  <strong>Reputation builds</strong>
                  Peers open, reply and rescue your mail from spam. Watch inbox placement rise on the overview.
                </div>
              </li>
            </ol>
            <p class="aside-note">
              <IconLock size={15} />
              <span>
                Passwords are encrypted at rest and never shown again. Warmup mail is filed into a Warmup folder, out of
                your inbox.
              </span>
            </p>
          </Card>
        </aside>
      </div>
    </>
  );
}
