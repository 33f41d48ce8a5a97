import { useCanEdit } from '../access.js';
import { useState } from 'preact/hooks';
import type { Mailbox } from '../api.js';
import { api } from '../api.js';
import { WarmupSettingsDialog } from './mailbox-settings.js';
import { ConfirmDialog } from './dialog.js';
import { IconEdit, IconPause, IconPlay, IconTrash } from './icons.js';
import { ReconnectButton } from './oauth-connect.js';
import { toast } from './toasts.js';
import { Button, errorMessage } from './ui.js';

/**
 * Pause or resume, edit the warmup settings, delete: the same actions on the list (compact, icon
 * buttons named after the mailbox) and on the detail page (labelled buttons).
 */
export function MailboxActions({
  mailbox,
  onChanged,
  onDeleted,
  compact,
}: {
  mailbox: Mailbox;
  onChanged: (mailbox: Mailbox) => void;
  onDeleted: () => void;
  compact?: boolean;
}) {
  const canEdit = useCanEdit();
  const [busy, setBusy] = useState(false);
  const [editing, setEditing] = useState(false);
  const [deleting, setDeleting] = useState(false);
  const paused = mailbox.status === 'paused';
  const canResume = mailbox.status !== 'active';

  async function toggle() {
    setBusy(true);
    try {
      const updated = canResume ? await api.resumeMailbox(mailbox.id) : await api.pauseMailbox(mailbox.id);
      onChanged(updated);
      toast(updated.status === 'paused' ? `Warmup paused for ${updated.email}` : `Warmup resumed for ${updated.email}`);
    } catch (error) {
      toast(`${canResume ? 'Could not resume' : 'Could not pause'} ${mailbox.email}: ${errorMessage(error)}`, 'error');
    } finally {
      setBusy(false);
    }
  }

  if (!canEdit) return null;
  const toggleLabel = canResume ? (paused ? 'Resume warmup' : 'Retry and resume') : 'Pause warmup';
  return (
    <div class={`row-actions ${compact ? 'compact' : ''}`}>
      <ReconnectButton mailbox={mailbox} compact={compact} />
      <Button
        size="sm"
        variant={compact ? 'ghost' : canResume ? 'primary' : 'secondary'}
        loading={busy}
        icon={canResume ? <IconPlay size={16} /> : <IconPause size={16} />}
        aria-label={compact ? `${toggleLabel} for ${mailbox.email}` : undefined}
        title={compact ? toggleLabel : undefined}
        onClick={toggle}
      >
        {compact ? undefined : toggleLabel}
      </Button>
      <Button
        size="sm"
        variant={compact ? 'ghost' : 'secondary'}
        icon={<IconEdit size={16} />}
        aria-label={compact ? `Edit warmup settings of ${mailbox.email}` : undefined}
        title={compact ? 'Edit warmup settings' : undefined}
        onClick={() => setEditing(true)}
      >
        {compact ? undefined : 'Warmup settings'}
      </Button>
      <Button
        size="sm"
        variant="danger-ghost"
        icon={<IconTrash size={16} />}
        aria-label={compact ? `Delete ${mailbox.email}` : undefined}
        title={compact ? 'Delete mailbox' : undefined}
        onClick={() => setDeleting(true)}
      >
        {compact ? undefined : 'Delete'}
      </Button>
      {editing && (
        <WarmupSettingsDialog
          mailbox={mailbox}
          onClose={() => setEditing(false)}
          onSaved={(updated) => {
            setEditing(false);
            onChanged(updated);
            toast(`Warmup settings saved for ${updated.email}`);
          }}
        />
      )}
      {deleting && (
        <ConfirmDialog
          title="Delete this mailbox?"
          confirmLabel="Delete mailbox"
          onClose={() => setDeleting(false)}
          onConfirm={async () => {
            await api.deleteMailbox(mailbox.id);
            setDeleting(false);
            toast(`${mailbox.email} was deleted`);
            onDeleted();
          }}
        >
          <p>
            <strong>{mailbox.email}</strong> stops warming up at once. Its stored password, planned sends and
            interaction history are deleted. This cannot be undone.
          </p>
        </ConfirmDialog>
      )}
    </div>
  );
}
