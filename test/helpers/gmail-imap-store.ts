// The Gmail-like test server's mailbox model: one store of messages per account, and folders that
// are views of labels the way Gmail shows them over IMAP, each with its own UIDs.
export const GMAIL_CATEGORIES = ['primary', 'promotions', 'updates', 'social', 'forums'] as const;
export type GmailTab = (typeof GMAIL_CATEGORIES)[number];

export interface GmailStoredMessage {
  gmId: string;
  raw: Buffer;
  flags: Set<string>;
  /** System labels (\Inbox, \Spam, \Trash, \Sent, \Important) and user labels (folder names). */
  labels: Set<string>;
  category: GmailTab;
  internalDate: Date;
  messageId: string;
}

export interface FolderDef {
  path: string;
  specialUse?: string;
  noselect?: boolean;
  /** The label that puts a message into this folder (none: a view like All Mail or Starred). */
  label?: string;
  has: (m: GmailStoredMessage) => boolean;
}

export interface FolderState {
  uidValidity: number;
  uidNext: number;
  uids: Map<string, number>;
  /** \Deleted is per folder, as on Gmail (it removes the message from this folder only). */
  deleted: Set<string>;
}

export interface Account {
  email: string;
  password: string;
  messages: GmailStoredMessage[];
  userLabels: string[];
  state: Map<string, FolderState>;
}

const outside = (m: GmailStoredMessage) => !m.labels.has('\\Spam') && !m.labels.has('\\Trash');

function systemFolders(): FolderDef[] {
  return [
    { path: 'INBOX', label: '\\Inbox', has: (m) => m.labels.has('\\Inbox') && outside(m) },
    { path: '[Gmail]', noselect: true, has: () => false },
    { path: '[Gmail]/All Mail', specialUse: '\\All', has: outside },
    { path: '[Gmail]/Drafts', specialUse: '\\Drafts', label: '\\Draft', has: (m) => m.labels.has('\\Draft') },
    {
      path: '[Gmail]/Important',
      specialUse: '\\Important',
      label: '\\Important',
      has: (m) => m.labels.has('\\Important') && outside(m),
    },
    { path: '[Gmail]/Sent Mail', specialUse: '\\Sent', label: '\\Sent', has: (m) => m.labels.has('\\Sent') },
    { path: '[Gmail]/Spam', specialUse: '\\Junk', label: '\\Spam', has: (m) => m.labels.has('\\Spam') },
    { path: '[Gmail]/Starred', specialUse: '\\Flagged', has: (m) => m.flags.has('\\Flagged') && outside(m) },
    { path: '[Gmail]/Trash', specialUse: '\\Trash', label: '\\Trash', has: (m) => m.labels.has('\\Trash') },
  ];
}

export function foldersOf(account: Account): FolderDef[] {
  return [
    ...systemFolders(),
    ...account.userLabels.map((label) => ({
      path: label,
      label,
      has: (m: GmailStoredMessage) => m.labels.has(label),
    })),
  ];
}

export function findFolder(account: Account, path: string): FolderDef | undefined {
  const wanted = path.toUpperCase() === 'INBOX' ? 'INBOX' : path;
  return foldersOf(account).find((f) => f.path === wanted);
}

export function folderState(account: Account, folder: FolderDef): FolderState {
  let state = account.state.get(folder.path);
  if (!state) {
    state = { uidValidity: 1 + account.state.size, uidNext: 1, uids: new Map(), deleted: new Set() };
    account.state.set(folder.path, state);
  }
  return state;
}

/** The folder's messages in UID order, giving a UID to each newcomer (a message that left and came back gets a new one). */
export function folderView(account: Account, folder: FolderDef): string[] {
  const state = folderState(account, folder);
  for (const [id] of state.uids) {
    const m = messageById(account, id);
    if (!m || !folder.has(m)) {
      state.uids.delete(id);
      state.deleted.delete(id);
    }
  }
  for (const m of account.messages) {
    if (folder.has(m) && !state.uids.has(m.gmId)) state.uids.set(m.gmId, state.uidNext++);
  }
  return [...state.uids.entries()].sort((a, b) => a[1] - b[1]).map(([id]) => id);
}

export function messageById(account: Account, id: string): GmailStoredMessage | undefined {
  return account.messages.find((m) => m.gmId === id);
}

export function fileInto(m: GmailStoredMessage, folder: FolderDef): void {
  if (folder.path === 'INBOX') {
    m.labels.delete('\\Spam');
    m.labels.delete('\\Trash');
  }
  if (folder.label === '\\Spam') m.labels.delete('\\Inbox');
  if (folder.label) m.labels.add(folder.label);
  if (folder.specialUse === '\\Flagged') m.flags.add('\\Flagged');
}

/** What leaving a folder means on Gmail: the folder's label goes; out of All Mail is into Trash. */
export function takeOutOf(m: GmailStoredMessage, folder: FolderDef, account: Account): void {
  if (folder.specialUse === '\\All') {
    m.labels.add('\\Trash');
    return;
  }
  if (folder.specialUse === '\\Trash') {
    account.messages.splice(account.messages.indexOf(m), 1);
    return;
  }
  if (folder.specialUse === '\\Flagged') m.flags.delete('\\Flagged');
  if (folder.label) m.labels.delete(folder.label);
}

export function labelOf(account: Account, value: string): string {
  if (value.startsWith('\\')) return value;
  return account.userLabels.find((l) => l.toLowerCase() === value.toLowerCase()) ?? value;
}
