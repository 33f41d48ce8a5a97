import { useState } from 'preact/hooks';
import { api, type ApiKey, type Member, type MemberAccess, type Role } from '../api.js';
import { useRole } from '../access.js';
import { ConfirmDialog } from '../components/dialog.js';
import { IconPlus, IconTrash } from '../components/icons.js';
import { toast } from '../components/toasts.js';
import { Button, Card, ErrorBox, Loading, PageHeader } from '../components/ui.js';
import { SelectField, TextField } from '../components/fields.js';
import { formatDateTime } from '../format.js';
import { useResource, useSubmit, useTitle } from '../hooks.js';

const ROLE_LABELS: Record<Role, string> = {
  viewer: 'Viewer: reads reports, changes nothing',
  member: 'Member: mailboxes and templates',
  admin: 'Admin: also keys, webhooks and the team',
  owner: 'Owner: also other owners',
};
const ROLE_NAMES: Record<Role, string> = { viewer: 'Viewer', member: 'Member', admin: 'Admin', owner: 'Owner' };

/** Who made a key or an invite, as its list says it. */
function madeBy(maker: ApiKey['createdBy']): string {
  return maker
    ? `made by ${maker.name || maker.email || 'a former member'}`
    : 'made by no one (bootstrap or command line)';
}

/**
 * What removing a member revokes, for the confirmation: the keys and open invites they made. A key
 * can be kept by re-issuing it under the remover's name (its new secret is shown once, here).
 */
function RemovalAccess({ userId }: { userId: string }) {
  const access = useResource(() => api.memberAccess(userId), [userId]);
  const [reissued, setReissued] = useState<Record<string, string>>({});
  if (access.error)
    return <ErrorBox error={access.error} onRetry={access.reload} title="What they made did not load" />;
  if (!access.data) return <Loading label="Loading what they made" rows={1} />;
  const { keys, invites }: MemberAccess = access.data;
  const kept = Object.keys(reissued);
  if (keys.length === 0 && invites.length === 0 && kept.length === 0) {
    return <p>They made no API keys and no open invites here.</p>;
  }
  return (
    <div class="stack">
      {(keys.length > 0 || invites.length > 0) && <p>These stop working too:</p>}
      <ul class="stack plain-list">
        {keys.map((key) => (
          <li key={key.id}>
            API key <strong>{key.name}</strong> ({ROLE_NAMES[key.role]}){' '}
            <Button
              size="sm"
              variant="ghost"
              aria-label={`Keep key ${key.name} by re-issuing it`}
              onClick={async () => {
                try {
                  const answer = await api.reissueApiKey(key.id);
                  setReissued((before) => ({ ...before, [key.name]: answer.apiKey }));
                  access.reload();
                } catch (failure) {
                  toast((failure as Error).message, 'error');
                }
              }}
            >
              Keep (re-issue)
            </Button>
          </li>
        ))}
        {invites.map((invite) => (
          <li key={invite.id}>
            Invite as {ROLE_NAMES[invite.role].toLowerCase()}
            {invite.email ? ` for ${invite.email}` : ''}
          </li>
        ))}
      </ul>
      {kept.map((name) => (
        <TextField
          key={name}
          label={`New key for ${name} (shown once)`}
          name={`reissued-${name}`}
          hint="Put it where the old key was used: the old key has stopped working"
          value={reissued[name]!}
          onValue={() => undefined}
        />
      ))}
    </div>
  );
}

/** The roles the signed-in person may hand out: only owners make owners. */
function grantable(mine: Role): Role[] {
  return mine === 'owner' ? ['viewer', 'member', 'admin', 'owner'] : ['viewer', 'member', 'admin'];
}

function InviteForm({ onInvited }: { onInvited: () => void }) {
  const mine = useRole();
  const [role, setRole] = useState<Role>('member');
  const [email, setEmail] = useState('');
  const [link, setLink] = useState<string>();

  const { busy, error, submit } = useSubmit(async () => {
    const created = await api.createInvite({ role, ...(email.trim() ? { email: email.trim() } : {}) });
    setLink(`${window.location.origin}${created.path}`);
    setEmail('');
    onInvited();
  });

  return (
    <Card title="Invite someone" subtitle="A link that works once and expires in 7 days">
      <form onSubmit={submit} class="stack">
        <SelectField
          label="Role"
          name="role"
          value={role}
          onValue={(value) => setRole(value as Role)}
          options={grantable(mine).map((value) => ({ value, label: ROLE_LABELS[value] }))}
        />
        <TextField
          label="Email (optional)"
          name="email"
          type="email"
          hint="Shown with the invite, to remember who it is for"
          value={email}
          onValue={setEmail}
        />
        {error !== undefined && <ErrorBox error={error} title="No invite was made" />}
        <div>
          <Button type="submit" variant="primary" icon={<IconPlus size={16} />} loading={busy}>
            Create invite link
          </Button>
        </div>
        {link && (
          <TextField
            label="Invite link (shown once)"
            name="inviteLink"
            hint="Send it to the person you invite"
            value={link}
            onValue={() => undefined}
          />
        )}
      </form>
    </Card>
  );
}

function MemberRow({ member, onChanged }: { member: Member; onChanged: () => void }) {
  const mine = useRole();
  const [removing, setRemoving] = useState(false);
  // Admins manage everyone but owners; owners manage everyone.
  const editable = mine === 'owner' || member.role !== 'owner';
  return (
    <tr>
      <td>
        <strong>{member.name}</strong>
        <div class="muted">{member.email}</div>
      </td>
      <td>
        {editable ? (
          <SelectField
            label={`Role of ${member.email}`}
            class="compact-field label-hidden"
            value={member.role}
            onValue={async (value) => {
              try {
                await api.updateMember(member.userId, value as Role);
                toast(`${member.name} is now ${ROLE_NAMES[value as Role].toLowerCase()}`);
              } catch (failure) {
                toast((failure as Error).message, 'error');
              }
              onChanged();
            }}
            options={grantable(mine).map((value) => ({ value, label: ROLE_NAMES[value] }))}
          />
        ) : (
          ROLE_NAMES[member.role]
        )}
      </td>
      <td>{formatDateTime(member.joinedAt)}</td>
      <td>
        {editable && (
          <Button
            variant="danger-ghost"
            size="sm"
            icon={<IconTrash size={16} />}
            aria-label={`Remove ${member.email}`}
            onClick={() => setRemoving(true)}
          />
        )}
        {removing && (
          <ConfirmDialog
            title="Remove this member?"
            confirmLabel="Remove"
            onClose={() => setRemoving(false)}
            onConfirm={async () => {
              await api.removeMember(member.userId);
              setRemoving(false);
              toast(`${member.name} was removed`);
              onChanged();
            }}
          >
            <p>{member.name} loses access to this workspace at once and is signed out of it everywhere.</p>
            <RemovalAccess userId={member.userId} />
          </ConfirmDialog>
        )}
      </td>
    </tr>
  );
}

const KEY_ROLES = ['viewer', 'member', 'admin'] as const;

/** The workspace's API keys, for scripts: listed without the keys, made (shown once) and revoked. */
function ApiKeys() {
  const keys = useResource(() => api.apiKeys(), []);
  const [name, setName] = useState('');
  const [role, setRole] = useState<(typeof KEY_ROLES)[number]>('viewer');
  const [created, setCreated] = useState<string>();

  const { busy, error, submit } = useSubmit(async () => {
    const answer = await api.createApiKey({ name: name.trim(), role });
    setCreated(answer.apiKey);
    setName('');
    keys.reload();
  });

  return (
    <Card title="API keys" subtitle="For scripts and integrations; each key acts with its role">
      <div class="stack">
        {keys.error ? (
          <ErrorBox error={keys.error} onRetry={keys.reload} title="The keys did not load" />
        ) : !keys.data ? (
          <Loading label="Loading keys" rows={1} />
        ) : keys.data.length === 0 ? (
          <p class="muted">No API keys.</p>
        ) : (
          <ul class="stack plain-list">
            {keys.data.map((key) => (
              <li key={key.id}>
                <strong>{key.name}</strong> <code>{key.prefix ?? ''}…</code> {ROLE_NAMES[key.role]},{' '}
                {madeBy(key.createdBy)}, last used {key.lastUsedAt ? formatDateTime(key.lastUsedAt) : 'never'}{' '}
                <Button
                  size="sm"
                  variant="danger-ghost"
                  aria-label={`Revoke key ${key.name}`}
                  onClick={async () => {
                    try {
                      await api.revokeApiKey(key.id);
                      toast(`Key ${key.name} revoked`);
                    } catch (failure) {
                      toast((failure as Error).message, 'error');
                    }
                    keys.reload();
                  }}
                >
                  Revoke
                </Button>
              </li>
            ))}
          </ul>
        )}
        <form onSubmit={submit} class="stack">
          <TextField label="Key name" name="keyName" hint="What the key is for" value={name} onValue={setName} />
          <SelectField
            label="Key role"
            name="keyRole"
            value={role}
            onValue={(value) => setRole(value as (typeof KEY_ROLES)[number])}
            options={KEY_ROLES.map((value) => ({ value, label: ROLE_LABELS[value] }))}
          />
          {error !== undefined && <ErrorBox error={error} title="No key was made" />}
          <div>
            <Button type="submit" variant="primary" icon={<IconPlus size={16} />} loading={busy}>
              Create API key
            </Button>
          </div>
          {created && (
            <TextField
              label="New API key (shown once)"
              name="newApiKey"
              hint="Copy it now: only its hash is kept"
              value={created}
              onValue={() => undefined}
            />
          )}
        </form>
      </div>
    </Card>
  );
}

/** Members and invites of the current workspace (admins and owners). */
export function TeamPage() {
  useTitle('Team');
  const members = useResource(() => api.members(), []);
  const invites = useResource(() => api.invites(), []);

  return (
    <>
      <PageHeader title="Team" subtitle="Who and what can use this workspace, and what they may do" />
      <div class="stack">
        <Card title="Members">
          {members.error ? (
            <ErrorBox error={members.error} onRetry={members.reload} title="The members did not load" />
          ) : !members.data ? (
            <Loading label="Loading members" rows={2} />
          ) : (
            <div class="table-wrap">
              <table class="table responsive-table">
                <caption class="visually-hidden">Members</caption>
                <thead>
                  <tr>
                    <th scope="col">Person</th>
                    <th scope="col">Role</th>
                    <th scope="col">Joined</th>
                    <th scope="col">
                      <span class="visually-hidden">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {members.data.map((member) => (
                    <MemberRow key={member.userId} member={member} onChanged={members.reload} />
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </Card>
        <InviteForm onInvited={invites.reload} />
        <Card title="Open invites">
          {invites.error ? (
            <ErrorBox error={invites.error} onRetry={invites.reload} title="The invites did not load" />
          ) : !invites.data ? (
            <Loading label="Loading invites" rows={1} />
          ) : invites.data.length === 0 ? (
            <p class="muted">No open invites.</p>
          ) : (
            <ul class="stack plain-list">
              {invites.data.map((invite) => (
                <li key={invite.id}>
                  {ROLE_NAMES[invite.role]}
                  {invite.email ? ` for ${invite.email}` : ''}, {madeBy(invite.createdBy)}, expires{' '}
                  {formatDateTime(invite.expiresAt)}{' '}
                  <Button
                    size="sm"
                    variant="danger-ghost"
                    onClick={async () => {
                      await api.revokeInvite(invite.id);
                      invites.reload();
                    }}
                  >
                    Revoke
                  </Button>
                </li>
              ))}
            </ul>
          )}
        </Card>
        <ApiKeys />
      </div>
    </>
  );
}
