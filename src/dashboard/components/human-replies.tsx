// People's replies to a mailbox's warmup mail: shown first on its page, because a person wrote and
// its owner should answer. What they wrote is shown as text (never as markup).
import { api } from '../api.js';
import { formatDateTime } from '../format.js';
import { useResource } from '../hooks.js';
import { Card, ErrorBox } from './ui.js';

/** The latest people's replies of a mailbox; nothing at all while it has none. */
export function HumanReplies({ mailboxId }: { mailboxId: string }) {
  const list = useResource(() => api.humanReplies(mailboxId, { page: 1, limit: 20 }), [mailboxId]);
  if (list.error) return <ErrorBox error={list.error} onRetry={list.reload} title="Could not load people's replies" />;
  const replies = list.data?.replies ?? [];
  if (replies.length === 0) return null;
  const total = list.data?.pagination.total ?? replies.length;
  return (
    <Card
      title={total === 1 ? 'A person replied' : `${total} people's replies`}
      subtitle="Someone answered this mailbox's warmup mail by hand. Warmup left the reply unread and wrote nothing more in that conversation: answer it yourself if it needs an answer."
      class="human-replies"
    >
      <ul class="human-reply-list" aria-label="People's replies">
        {replies.map((reply) => (
          <li key={reply.id} class="human-reply" data-testid="human-reply">
            <p class="human-reply-head">
              <strong>{reply.from.name || reply.from.email}</strong>
              {reply.from.name && <span class="muted"> &lt;{reply.from.email}&gt;</span>}
              <span class="muted"> · {formatDateTime(reply.date ?? reply.foundAt)}</span>
            </p>
            <p class="human-reply-subject">{reply.subject || '(no subject)'}</p>
            <p class="human-reply-text">{reply.excerpt || '(no text)'}</p>
            <p class="muted">
              Unread in {reply.folder.toLowerCase() === 'warmup' ? 'the Warmup folder' : `the ${reply.folder} folder`}{' '}
              of this mailbox.
            </p>
          </li>
        ))}
      </ul>
    </Card>
  );
}
