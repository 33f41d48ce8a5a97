// The subset of Gmail's X-GM-RAW search syntax the Gmail-like test server understands.
import { type GmailStoredMessage, type Account } from './gmail-imap-store.js';

// ---- X-GM-RAW ---------------------------------------------------------------------------------

export type Matcher = (m: GmailStoredMessage) => boolean;

/** A subset of Gmail's search syntax: terms are ANDed, OR joins two, {a b} is any of, -t negates. */
export function parseGmailQuery(query: string, account: Account): Matcher {
  const tokens: string[] = [];
  let word = '';
  let quoted = false;
  for (const c of query) {
    if (c === '"') quoted = !quoted;
    if (!quoted && (c === ' ' || c === '(' || c === ')' || c === '{' || c === '}')) {
      if (word) tokens.push(word);
      word = '';
      if (c !== ' ') tokens.push(c);
    } else word += c;
  }
  if (word) tokens.push(word);
  let pos = 0;
  const sequence = (end: string | null): Matcher => {
    const terms: Matcher[] = [];
    while (pos < tokens.length && tokens[pos] !== end) {
      let term = unary();
      while (tokens[pos] === 'OR') {
        pos++;
        const left = term;
        const right = unary();
        term = (m) => left(m) || right(m);
      }
      terms.push(term);
    }
    pos++;
    return (m) => terms.every((t) => t(m));
  };
  const unary = (): Matcher => {
    const token = tokens[pos++] ?? '';
    if (token === '(') return sequence(')');
    if (token === '{') {
      const any: Matcher[] = [];
      while (pos < tokens.length && tokens[pos] !== '}') any.push(unary());
      pos++;
      return (m) => any.some((t) => t(m));
    }
    if (token.startsWith('-') && token.length > 1) {
      tokens[--pos] = token.slice(1);
      const inner = unary();
      return (m) => !inner(m);
    }
    return gmailTerm(token, account);
  };
  return sequence(null);
}

function gmailTerm(token: string, account: Account): Matcher {
  const colon = token.indexOf(':');
  const operator = colon > 0 ? token.slice(0, colon).toLowerCase() : '';
  const operand = (colon > 0 ? token.slice(colon + 1) : token).replace(/^"|"$/g, '');
  const lower = operand.toLowerCase();
  switch (operator) {
    case 'category':
      // Gmail's "personal" is the Primary tab
      return (m) => m.labels.has('\\Inbox') && m.category === (lower === 'personal' ? 'primary' : lower);
    case 'rfc822msgid': {
      const wanted = lower.replace(/^<|>$/g, '');
      return (m) => m.messageId.toLowerCase().replace(/^<|>$/g, '') === wanted;
    }
    case 'label':
    case 'in': {
      if (lower === 'inbox') return (m) => m.labels.has('\\Inbox');
      if (lower === 'spam') return (m) => m.labels.has('\\Spam');
      if (lower === 'trash') return (m) => m.labels.has('\\Trash');
      if (lower === 'anywhere') return () => true;
      const label = account.userLabels.find((l) => l.toLowerCase() === lower);
      return (m) => label !== undefined && m.labels.has(label);
    }
    case 'is':
      if (lower === 'important') return (m) => m.labels.has('\\Important');
      if (lower === 'starred') return (m) => m.flags.has('\\Flagged');
      if (lower === 'unread') return (m) => !m.flags.has('\\Seen');
      return () => false;
    default:
      return (m) => m.raw.toString('latin1').toLowerCase().includes(token.toLowerCase());
  }
}
