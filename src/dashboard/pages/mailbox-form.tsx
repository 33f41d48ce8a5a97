import { useMemo, useState } from 'preact/hooks';
import type { Mailbox, MailboxCreate, ProviderPreset, ServerSettings, WarmupSettings } from '../api.js';
import { ApiError, api } from '../api.js';
import { Dialog } from '../components/dialog.js';
import { IconExternal, IconLock } from '../components/icons.js';
import { OAuthConnectCard } from '../components/oauth-connect.js';
import { toast } from '../components/toasts.js';
import { Button, Card, ErrorBox, Link, Loading, Notice, PageHeader } from '../components/ui.js';
import { CheckboxField, SelectField, TextField } from '../components/fields.js';
import { DEFAULT_WARMUP } from '../../mailboxes/warmup-settings.js';
import { LANGUAGES, PROVIDER_NAMES, asOptions } from '../format.js';
import { useResource, useTitle } from '../hooks.js';
import { navigate } from '../router.js';

function browserTimeZone(): string {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  } catch {
    return 'UTC';
  }
}

/** The zones to choose from, with `current` among them (a browser may name its zone by an alias the list lacks). */
function timeZones(current: string): string[] {
  const intl = Intl as typeof Intl & { supportedValuesOf?: (key: string) => string[] };
  const zones = intl.supportedValuesOf?.('timeZone') ?? [];
  const others = zones.filter((zone) => zone !== 'UTC' && zone !== current);
  return ['UTC', ...(current === 'UTC' ? others : [...others, current].sort())];
}

/** Numbers typed into the form stay text until submit, so a half-typed value is never rewritten. */
type WarmupDraft = Omit<WarmupSettings, 'startVolume' | 'rampUpIncrement' | 'dailyLimit' | 'replyRate'> & {
  startVolume: string;
  rampUpIncrement: string;
  dailyLimit: string;
  replyRate: string;
};

function toDraft(settings: WarmupSettings): WarmupDraft {
  return {
    ...settings,
    startVolume: String(settings.startVolume),
    rampUpIncrement: String(settings.rampUpIncrement),
    dailyLimit: String(settings.dailyLimit),
    replyRate: String(settings.replyRate),
  };
}

function fromDraft(draft: WarmupDraft): WarmupSettings {
  return {
    ...draft,
    startVolume: Number(draft.startVolume),
    rampUpIncrement: Number(draft.rampUpIncrement),
    dailyLimit: Number(draft.dailyLimit),
    replyRate: Number(draft.replyRate),
  };
}

const LANGUAGE_OPTIONS = asOptions(LANGUAGES);

/** The warmup settings, shared by the add form and the edit dialog; errors keyed `warmup/<field>`. */
function WarmupFields({
  draft,
  onDraft,
  errors,
}: {
  draft: WarmupDraft;
  onDraft: (draft: WarmupDraft) => void;
  errors: Record<string, string>;
}) {
  const zones = useMemo(() => timeZones(draft.timezone), [draft.timezone]);
  const set = <K extends keyof WarmupDraft>(field: K, value: WarmupDraft[K]) => onDraft({ ...draft, [field]: value });
  return (
    <div class="form-grid">
      <TextField
        label="Start volume"
        hint="Emails on the first day"
        type="number"
        min={1}
        inputMode="numeric"
        name="startVolume"
        value={draft.startVolume}
        onValue={(v) => set('startVolume', v)}
        error={errors['warmup/startVolume']}
      />
      <TextField
        label="Daily increase"
        hint="Added each warmup day"
        type="number"
        min={0}
        inputMode="numeric"
        name="rampUpIncrement"
        value={draft.rampUpIncrement}
        onValue={(v) => set('rampUpIncrement', v)}
        error={errors['warmup/rampUpIncrement']}
      />
      <TextField
        label="Daily limit"
        hint="Never more than this (1–500)"
        type="number"
        min={1}
        max={500}
        inputMode="numeric"
        name="dailyLimit"
        value={draft.dailyLimit}
        onValue={(v) => set('dailyLimit', v)}
        error={errors['warmup/dailyLimit']}
      />
      <TextField
        label="Reply rate (%)"
        hint="Share of received warmup mail answered"
        type="number"
        min={0}
        max={100}
        inputMode="numeric"
        name="replyRate"
        value={draft.replyRate}
        onValue={(v) => set('replyRate', v)}
        error={errors['warmup/replyRate']}
      />
      <TextField
        label="Send window starts"
        type="time"
        name="sendWindowStart"
        value={draft.sendWindow.start}
        onValue={(v) => set('sendWindow', { ...draft.sendWindow, start: v })}
        error={errors['warmup/sendWindow/start'] ?? errors['warmup/sendWindow']}
      />
      <TextField
        label="Send window ends"
        type="time"
        name="sendWindowEnd"
        value={draft.sendWindow.end}
        onValue={(v) => set('sendWindow', { ...draft.sendWindow, end: v })}
        error={errors['warmup/sendWindow/end']}
      />
      <SelectField
        label="Time zone"
        name="timezone"
        value={draft.timezone}
        onValue={(v) => set('timezone', v)}
        options={zones.map((zone) => ({ value: zone, label: zone.replace(/_/g, ' ') }))}
        error={errors['warmup/timezone']}
      />
      <SelectField
        label="Template language"
        name="language"
        value={draft.language}
        onValue={(v) => set('language', v)}
        options={LANGUAGE_OPTIONS}
        hint="Falls back to English"
        error={errors['warmup/language']}
      />
      <div class="span-all">
        <CheckboxField
          label="Weekdays only"
          hint="No warmup mail on Saturdays and Sundays."
          checked={draft.weekdaysOnly}
          onChecked={(v) => set('weekdaysOnly', v)}
        />
      </div>
    </div>
  );
}

/** Field errors of a 400, and the message of anything else, for a form to show in place. */
function formErrors(error: unknown): { fields: Record<string, string>; general?: ApiError | Error } {
  if (error instanceof ApiError && error.status === 400) {
    const fields = error.fieldErrors();
    return { fields, general: Object.keys(fields).length === 0 ? error : undefined };
  }
  return { fields: {}, general: error instanceof Error ? error : new Error(String(error)) };
}

export function WarmupSettingsDialog({
  mailbox,
  onClose,
  onSaved,
}: {
  mailbox: Mailbox;
  onClose: () => void;
  onSaved: (mailbox: Mailbox) => void;
}) {
  const [name, setName] = useState(mailbox.name ?? '');
  const [password, setPassword] = useState('');
  const [draft, setDraft] = useState(() => toDraft(mailbox.warmup));
  const [imap, setImap] = useState<ServerDraft>(() => serverDraft(mailbox.imap));
  const [smtp, setSmtp] = useState<ServerDraft>(() => serverDraft(mailbox.smtp));
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [general, setGeneral] = useState<Error>();
  const [busy, setBusy] = useState(false);
  const imapChanged = serverChanged(mailbox.imap, imap);
  const smtpChanged = serverChanged(mailbox.smtp, smtp);
  // The stored password only ever goes to the servers it was given for (the API insists too).
  const moved = movedServer(mailbox.imap, imap) || movedServer(mailbox.smtp, smtp);

  async function save(event?: Event) {
    event?.preventDefault();
    if (moved && !password) {
      setErrors({ password: 'Enter the password again: it is sent to the new server only with your say-so' });
      return;
    }
    setBusy(true);
    setErrors({});
    setGeneral(undefined);
    try {
      const updated = await api.updateMailbox(mailbox.id, {
        name: name.trim() || undefined,
        warmup: fromDraft(draft),
        ...(password ? { password } : {}),
        ...(imapChanged ? { imap: serverInput(imap) } : {}),
        ...(smtpChanged ? { smtp: serverInput(smtp) } : {}),
      });
      onSaved(updated);
    } catch (error) {
      const found = formErrors(error);
      setErrors(found.fields);
      setGeneral(found.general);
      setBusy(false);
    }
  }

  return (
    <Dialog
      title="Warmup settings"
      onClose={onClose}
      footer={
        <>
          <Button variant="ghost" onClick={onClose} disabled={busy}>
            Cancel
          </Button>
          <Button variant="primary" loading={busy} onClick={() => save()}>
            Save settings
          </Button>
        </>
      }
    >
      <form onSubmit={save} noValidate>
        <p class="dialog-lead">{mailbox.email}</p>
        <TextField
          label="Sender name"
          name="name"
          hint="Shown as the sender of warmup emails"
          value={name}
          onValue={setName}
          error={errors.name}
        />
        <WarmupFields draft={draft} onDraft={setDraft} errors={errors} />
        <details class="server-settings" open={imapChanged || smtpChanged}>
          <summary>Mail servers</summary>
          <ServerFields kind="imap" server={imap} onServer={setImap} errors={errors} />
          <ServerFields kind="smtp" server={smtp} onServer={setSmtp} errors={errors} />
        </details>
        <TextField
          label={moved ? 'Password (required for the new server)' : 'New password'}
          name="newPassword"
          type="password"
          autoComplete="new-password"
          hint={
            moved
              ? 'A new host or port needs the password again. Both servers are checked before anything is saved.'
              : 'Leave empty to keep the current one. A new password is checked with the server first; a stopped mailbox then warms up again.'
          }
          value={password}
          onValue={setPassword}
          error={errors.password}
        />
        {general && (
          <ErrorBox
            error={general}
            title={
              general instanceof ApiError && general.status === 422
                ? 'The mailbox server refused the new password'
                : 'The settings were not saved'
            }
          />
        )}
        <button type="submit" hidden />
      </form>
    </Dialog>
  );
}

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

interface ServerDraft {
  host: string;
  port: string;
  secure: boolean;
}

function serverDraft(server: Mailbox['imap']): ServerDraft {
  return { host: server.host, port: String(server.port), secure: server.secure };
}

function serverInput(draft: ServerDraft): ServerSettings {
  return { host: draft.host.trim(), port: Number(draft.port), secure: draft.secure };
}

function serverChanged(current: Mailbox['imap'], draft: ServerDraft): boolean {
  return movedServer(current, draft) || current.secure !== draft.secure;
}

function movedServer(current: Mailbox['imap'], draft: ServerDraft): boolean {
  return current.host.toLowerCase() !== draft.host.trim().toLowerCase() || String(current.port) !== draft.port.trim();
}

const SECURITY_OPTIONS = [
  { value: 'tls', label: 'SSL/TLS' },
  { value: 'starttls', label: 'STARTTLS' },
];

function ServerFields({
  kind,
  server,
  onServer,
  errors,
}: {
  kind: 'imap' | 'smtp';
  server: ServerDraft;
  onServer: (server: ServerDraft) => void;
  errors: Record<string, string>;
}) {
  const label = kind === 'imap' ? 'IMAP' : 'SMTP';
  const ports = kind === 'imap' ? { tls: '993', starttls: '143' } : { tls: '465', starttls: '587' };
  return (
    <fieldset class="server-fields">
      <legend>
        {label} server {kind === 'imap' ? '(reading)' : '(sending)'}
      </legend>
      <div class="form-grid server-grid">
        <TextField
          label={`${label} host`}
          name={`${kind}Host`}
          placeholder={kind === 'imap' ? 'imap.example.com' : 'smtp.example.com'}
          value={server.host}
          onValue={(host) => onServer({ ...server, host })}
          error={errors[`${kind}/host`] ?? errors[kind]}
          autoComplete="off"
          spellcheck={false}
        />
        <TextField
          label={`${label} port`}
          name={`${kind}Port`}
          type="number"
          inputMode="numeric"
          min={1}
          max={65535}
          value={server.port}
          onValue={(port) => onServer({ ...server, port })}
          error={errors[`${kind}/port`]}
        />
        <SelectField
          label={`${label} security`}
          name={`${kind}Security`}
          value={server.secure ? 'tls' : 'starttls'}
          options={SECURITY_OPTIONS}
          error={errors[`${kind}/secure`]}
          onValue={(value) => {
            const secure = value === 'tls';
            // Follow the usual port of the chosen security unless the port was set by hand.
            const standard = Object.values(ports).includes(server.port);
            onServer({ ...server, secure, port: standard ? (secure ? ports.tls : ports.starttls) : server.port });
          }}
        />
      </div>
    </fieldset>
  );
}

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
