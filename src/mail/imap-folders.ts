// What a folder is for (inbox, spam, Gmail's tabs, sent…), from its SPECIAL-USE flag or its name.
/** Where processed warmup mail is filed; never searched unless asked for. */
export const WARMUP_FOLDER = 'Warmup';

/**
 * Gmail's inbox tabs. Over IMAP they are not folders: every tab's mail sits in INBOX, and only an
 * X-GM-RAW search (`category:promotions`) tells which tab a message is shown in. Gmail's own word
 * for Primary in searches is `personal`.
 */
export const GMAIL_CATEGORIES = ['primary', 'promotions', 'updates', 'social', 'forums'] as const;
export type GmailCategory = (typeof GMAIL_CATEGORIES)[number];

export type FolderRole = 'inbox' | 'spam' | 'promotions' | 'sent' | 'trash' | 'drafts' | 'archive' | 'other';

export interface FolderInfo {
  path: string;
  /** Last segment of the path. */
  name: string;
  delimiter: string;
  role: FolderRole;
  /** SPECIAL-USE flag as reported (or inferred by name), e.g. '\\Junk'. */
  specialUse?: string;
  subscribed: boolean;
}

const SPAM_NAMES = new Set([
  'spam',
  'junk',
  'bulk',
  'junk e-mail',
  'junk email',
  'junk mail',
  'bulk mail',
  'spam mail',
]);
const PROMOTION_NAMES = new Set(['promotions', 'social', 'updates', 'forums']);
const SENT_NAMES = new Set(['sent', 'sent items', 'sent mail', 'sent messages']);
const TRASH_NAMES = new Set(['trash', 'deleted items', 'deleted messages', 'bin']);
const DRAFT_NAMES = new Set(['drafts', 'draft']);
const ARCHIVE_NAMES = new Set(['archive', 'archives', 'all mail']);
/** Where a delivery lands: the only folders a second copy of mail filed already is looked for in. */
export const DELIVERY_ROLES: ReadonlySet<FolderRole> = new Set(['inbox', 'spam', 'promotions']);

/** The role of a folder from its SPECIAL-USE flag, else from its name. */
export function classifyFolder(folder: {
  path: string;
  name?: string;
  delimiter?: string;
  specialUse?: string;
}): FolderRole {
  const path = folder.path;
  const leaf = (folder.name ?? lastSegment(path, folder.delimiter)).trim().toLowerCase();
  const full = path.toLowerCase();
  switch (folder.specialUse) {
    case '\\Inbox':
      return 'inbox';
    case '\\Junk':
      return 'spam';
    case '\\Sent':
      return 'sent';
    case '\\Trash':
      return 'trash';
    case '\\Drafts':
      return 'drafts';
    case '\\Archive':
    case '\\All':
      return 'archive';
  }
  if (full === 'inbox') return 'inbox';
  if (SPAM_NAMES.has(leaf) || full === '[gmail]/spam' || full === '[google mail]/spam') return 'spam';
  if (PROMOTION_NAMES.has(leaf) || /categor(y|ies)[/.]/.test(full)) return 'promotions';
  if (SENT_NAMES.has(leaf)) return 'sent';
  if (TRASH_NAMES.has(leaf)) return 'trash';
  if (DRAFT_NAMES.has(leaf)) return 'drafts';
  if (ARCHIVE_NAMES.has(leaf)) return 'archive';
  return 'other';
}

function lastSegment(path: string, delimiter: string | undefined): string {
  if (!delimiter) return path;
  const parts = path.split(delimiter);
  return parts[parts.length - 1] ?? path;
}

export function isWarmupFolder(folder: FolderInfo): boolean {
  return folder.name.toLowerCase() === WARMUP_FOLDER.toLowerCase();
}

export function hasFlag(flags: Set<string>, flag: string): boolean {
  for (const f of flags) if (f.toLowerCase() === flag.toLowerCase()) return true;
  return false;
}
