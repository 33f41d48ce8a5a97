// The warmup and server settings of a mailbox: fields shared by the add page and the edit dialog, and the dialog itself.
import { useMemo, useState } from 'preact/hooks';
import type { Mailbox, ServerSettings, WarmupSettings } from '../api.js';
import { ApiError, api } from '../api.js';
import { LANGUAGES, asOptions } from '../format.js';
import { Dialog } from './dialog.js';
import { CheckboxField, SelectField, TextField } from './fields.js';
import { Button, ErrorBox } from './ui.js';

export function browserTimeZone(): string {
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
export type WarmupDraft = Omit<WarmupSettings, 'startVolume' | 'rampUpIncrement' | 'dailyLimit' | 'replyRate'> & {
  startVolume: string;
  rampUpIncrement: string;
  dailyLimit: string;
  replyRate: string;
};

export function toDraft(settings: WarmupSettings): WarmupDraft {
  return {
    ...settings,
    startVolume: String(settings.startVolume),
    rampUpIncrement: String(settings.rampUpIncrement),
    dailyLimit: String(settings.dailyLimit),
    replyRate: String(settings.replyRate),
  };
}

export function fromDraft(draft: WarmupDraft): WarmupSettings {
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
export function WarmupFields({
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
export function formErrors(error: unknown): { fields: Record<string, string>; general?: ApiError | Error } {
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

export interface ServerDraft {
  host: string;
  port: string;
  secure: boolean;
}

function serverDraft(server: Mailbox['imap']): ServerDraft {
  return { host: server.host, port: String(server.port), secure: server.secure };
}

export function serverInput(draft: ServerDraft): ServerSettings {
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

export function ServerFields({
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
