// Peering, for the person who set the installation up (the API answers anyone else 403): this
// installation's key to give to the other operator, the peers with their state, offer and what
// flowed each way lately, and adding, pausing, resuming and removing one.
import { useState } from 'preact/hooks';
import { api, ApiError, type Peer } from '../api.js';
import { ConfirmDialog } from '../components/dialog.js';
import { TextField } from '../components/fields.js';
import { IconPlus, IconTrash } from '../components/icons.js';
import { toast } from '../components/toasts.js';
import { Badge, Button, Card, EmptyState, ErrorBox, Loading, Notice, PageHeader } from '../components/ui.js';
import { formatDateTime } from '../format.js';
import { useResource, useSubmit, useTitle } from '../hooks.js';

const STATE_TONES: Record<Peer['state'], 'green' | 'blue' | 'red' | 'neutral'> = {
  active: 'green',
  pending: 'blue',
  paused: 'neutral',
  removed: 'red',
};

/** One direction of a peer's mail in words: what was announced, and where it was found. */
function flowText(flow: Peer['flows']['toPeer']): string {
  if (flow.announced === 0) return 'no mail';
  const where =
    flow.found === 0 ? 'none found yet' : `${flow.found} found (${flow.inbox} in the inbox, ${flow.spam} in spam)`;
  return `${flow.announced} messages, ${where}${flow.lost > 0 ? `, ${flow.lost} lost` : ''}`;
}

function AddPeer({ onAdded }: { onAdded: () => void }) {
  const [url, setUrl] = useState('');
  const [publicKey, setPublicKey] = useState('');
  const [domains, setDomains] = useState('');
  const [mailboxes, setMailboxes] = useState('10');
  const [dailyCeiling, setDailyCeiling] = useState('200');

  const {
    busy: saving,
    error,
    submit: onSubmit,
  } = useSubmit(async () => {
    await api.addPeer({
      url: url.trim(),
      publicKey: publicKey.trim(),
      offer: {
        domains: domains
          .split(/[\s,]+/)
          .map((d) => d.trim().toLowerCase())
          .filter(Boolean),
        mailboxes: Number(mailboxes),
        dailyCeiling: Number(dailyCeiling),
      },
    });
    setUrl('');
    setPublicKey('');
    toast('Peer added: it turns active once it has added this installation too');
    onAdded();
  });
  const fields = error instanceof ApiError ? error.fieldErrors() : {};

  return (
    <Card title="Add a peer" subtitle="Nothing flows until the other installation has added this one too">
      <form onSubmit={onSubmit} class="stack">
        <TextField label="Its URL" required value={url} onValue={setUrl} placeholder="https://" error={fields.url} />
        <TextField
          label="Its public key"
          required
          value={publicKey}
          onValue={setPublicKey}
          hint="43 characters, from `warmup peer key` on the other installation"
          error={fields.publicKey}
        />
        <TextField
          label="Domains that take part"
          value={domains}
          onValue={setDomains}
          hint="Separated by commas: their proven, active mailboxes warm with this peer"
          error={fields['offer/domains'] ?? fields['offer/domains/0']}
        />
        <TextField
          label="Mailboxes at most"
          type="number"
          inputMode="numeric"
          value={mailboxes}
          onValue={setMailboxes}
          error={fields['offer/mailboxes']}
        />
        <TextField
          label="Mail a day accepted from it"
          type="number"
          inputMode="numeric"
          value={dailyCeiling}
          onValue={setDailyCeiling}
          error={fields['offer/dailyCeiling']}
        />
        {error !== undefined && <ErrorBox error={error} title="The peer was not added" />}
        <div>
          <Button type="submit" variant="primary" icon={<IconPlus size={16} />} loading={saving}>
            Add peer
          </Button>
        </div>
      </form>
    </Card>
  );
}

function PeerRow({ peer, onChanged, onRemove }: { peer: Peer; onChanged: () => void; onRemove: () => void }) {
  const [busy, setBusy] = useState(false);
  async function act(change: () => Promise<unknown>, done: string) {
    setBusy(true);
    try {
      await change();
      toast(done);
      onChanged();
    } catch (failure) {
      toast(failure instanceof Error ? failure.message : String(failure), 'error');
    } finally {
      setBusy(false);
    }
  }
  return (
    <tr>
      <th scope="row" class="break-anywhere">
        {peer.url}
      </th>
      <td data-label="Fingerprint">
        <code>{peer.fingerprint}</code>
      </td>
      <td data-label="State">
        <Badge tone={STATE_TONES[peer.state]}>{peer.state}</Badge>
        {peer.pausedReason && (
          <p class="break-anywhere">
            <strong>Paused by this installation:</strong> {peer.pausedReason}
          </p>
        )}
        {peer.lastError && <p class="muted break-anywhere">{peer.lastError}</p>}
      </td>
      <td data-label="Offer">
        {peer.offer.domains.join(', ') || 'no domain'}; {peer.offer.mailboxes} mailboxes, {peer.offer.dailyCeiling} a
        day accepted
      </td>
      <td data-label="Last 7 days">
        <p>
          <strong>To it:</strong> {flowText(peer.flows.toPeer)}
        </p>
        <p>
          <strong>From it:</strong> {flowText(peer.flows.fromPeer)}
        </p>
      </td>
      <td data-label="Last handshake">{peer.handshakeAt ? formatDateTime(peer.handshakeAt) : 'none yet'}</td>
      <td data-label="Actions">
        <div class="row-actions">
          {peer.state === 'paused' ? (
            <Button size="sm" loading={busy} onClick={() => act(() => api.resumePeer(peer.id), 'Peer resumed')}>
              Resume
            </Button>
          ) : (
            <Button size="sm" loading={busy} onClick={() => act(() => api.pausePeer(peer.id), 'Peer paused')}>
              Pause
            </Button>
          )}
          <Button size="sm" variant="ghost" icon={<IconTrash size={16} />} onClick={onRemove}>
            Remove
          </Button>
        </div>
      </td>
    </tr>
  );
}

export function PeersPage() {
  useTitle('Peers');
  const identity = useResource(() => api.peerIdentity(), []);
  const list = useResource(() => api.peers(), []);
  const [removing, setRemoving] = useState<Peer>();

  if (identity.error instanceof ApiError && identity.error.status === 403) {
    return (
      <>
        <PageHeader title="Peers" />
        <Notice title="Only the installation's owner manages its peers">
          Peering is set up by the person who set this installation up, signed in with their own account.
        </Notice>
      </>
    );
  }
  const peers = (list.data ?? []).filter((peer) => peer.state !== 'removed');
  return (
    <>
      <PageHeader
        title="Peers"
        subtitle="Installations that chose each other warm each other's mailboxes, with no company in the middle"
      />
      <Card title="This installation's key" subtitle="Give it and this installation's URL to the other operator">
        {identity.error && <ErrorBox error={identity.error} onRetry={identity.reload} title="The key did not load" />}
        {identity.loading && !identity.data && <Loading rows={1} />}
        {identity.data && (
          <div class="stack">
            <p>
              Public key: <code class="break-anywhere">{identity.data.publicKey}</code>
            </p>
            <p>
              Fingerprint: <code>{identity.data.fingerprint}</code> (compare it with the other operator by phone)
            </p>
          </div>
        )}
      </Card>
      <Card title="Peers">
        {list.error && <ErrorBox error={list.error} onRetry={list.reload} title="The peers did not load" />}
        {list.loading && !list.data && <Loading rows={2} />}
        {list.data && peers.length === 0 && (
          <EmptyState title="No peer yet">Add one below once its operator has sent its URL and key.</EmptyState>
        )}
        {peers.length > 0 && (
          <div class="table-wrap">
            <table class="table responsive-table">
              <caption class="visually-hidden">Peers</caption>
              <thead>
                <tr>
                  <th scope="col">URL</th>
                  <th scope="col">Fingerprint</th>
                  <th scope="col">State</th>
                  <th scope="col">Offer</th>
                  <th scope="col">Last 7 days</th>
                  <th scope="col">Last handshake</th>
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {peers.map((peer) => (
                  <PeerRow key={peer.id} peer={peer} onChanged={list.reload} onRemove={() => setRemoving(peer)} />
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Card>
      <AddPeer onAdded={list.reload} />
      {removing && (
        <ConfirmDialog
          title="Remove this peer?"
          confirmLabel="Remove peer"
          onClose={() => setRemoving(undefined)}
          onConfirm={async () => {
            await api.removePeer(removing.id);
            setRemoving(undefined);
            toast('Peer removed');
            list.reload();
          }}
        >
          <p>
            {removing.url} is refused from now on. Adding its key again starts over: both operators have to add each
            other.
          </p>
        </ConfirmDialog>
      )}
    </>
  );
}
