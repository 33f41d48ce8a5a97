// The XML of a DMARC aggregate report (RFC 7489 appendix C, and DMARCbis's namespaced form) read
// by a purpose-built tokenizer: elements, text, comments, CDATA, the five predefined entities and
// numeric character references. Nothing else of XML is understood, so nothing else can be abused:
// a DOCTYPE (and with it every entity declaration) is refused outright. Every position only moves
// forward and every loop consumes input, so the work is linear in the text; depth, tag length,
// kept values and records are capped, so the memory is bounded whatever the text says.
import { isIP } from 'node:net';

export interface ReportLimits {
  /** Records of one report beyond which it is set aside (a real report has far fewer distinct rows). */
  maxRecords: number;
}

export const DEFAULT_REPORT_LIMITS: ReportLimits = { maxRecords: 50_000 };

/** The aggregate schema nests six deep; anything much deeper is not a report. */
const MAX_DEPTH = 16;
/** A tag (name and attributes) longer than this is refused: the schema's tags are short. */
const MAX_TAG_CHARS = 4_096;
/** The longest value kept (an org name, a report id, a domain). */
const MAX_VALUE_CHARS = 1_024;

export interface PublishedPolicy {
  domain: string;
  /** `none`, `quarantine` or `reject` as published; null when the report leaves it out. */
  p: string | null;
  sp: string | null;
  pct: number | null;
  /** DKIM and SPF alignment modes (`r` relaxed, `s` strict). */
  adkim: string | null;
  aspf: string | null;
}

export interface ReportRecord {
  sourceIp: string;
  count: number;
  /** What the receiver did: `none`, `quarantine` or `reject` (DMARCbis adds `pass`). */
  disposition: string;
  /** policy_evaluated: whether DKIM, resp. SPF, passed aligned with the From domain. */
  dkimAligned: string;
  spfAligned: string;
  /** auth_results: the first DKIM and SPF results as the receiver saw them, aligned or not. */
  dkimResult: string | null;
  spfResult: string | null;
  headerFrom: string;
}

export interface AggregateReport {
  orgName: string;
  reportId: string;
  /** Seconds since the epoch, as the report gives them. */
  begin: number;
  end: number;
  policy: PublishedPolicy;
  records: ReportRecord[];
}

/** Why a text is not a report that can be kept; the message is the reason shown to the owner. */
export class ReportRefused extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const PREDEFINED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

/** Resolves the references of a text; only predefined entities and character references exist here. */
function decodeText(raw: string): string {
  if (!raw.includes('&')) return raw;
  let out = '';
  let i = 0;
  while (i < raw.length) {
    const amp = raw.indexOf('&', i);
    if (amp < 0) {
      out += raw.slice(i);
      break;
    }
    out += raw.slice(i, amp);
    const semi = raw.indexOf(';', amp);
    // a reference is short: a far-away semicolon is a stray ampersand
    if (semi < 0 || semi - amp > 10) throw new ReportRefused('malformed', 'The XML has a stray "&".');
    const name = raw.slice(amp + 1, semi);
    if (name.startsWith('#')) {
      const code = name[1] === 'x' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
      if (!Number.isInteger(code) || code <= 0 || code > 0x10ffff) {
        throw new ReportRefused('malformed', `The XML has an invalid character reference "&${name};".`);
      }
      out += String.fromCodePoint(code);
    } else if (name in PREDEFINED) {
      out += PREDEFINED[name];
    } else {
      throw new ReportRefused('entity', `The XML uses the entity "&${name.slice(0, 20)};", which reports never need.`);
    }
    i = semi + 1;
  }
  return out;
}

interface XmlEvents {
  open(name: string, depth: number): void;
  /** Raw text (references not yet resolved) inside the element at `depth`. */
  text(raw: string, cdata: boolean): void;
  close(name: string, depth: number): void;
}

/** One pass over the text, calling back per element and text run. */
function tokenize(xml: string, on: XmlEvents): void {
  const stack: string[] = [];
  let rootSeen = false;
  let i = 0;
  const n = xml.length;
  while (i < n) {
    const lt = xml.indexOf('<', i);
    const textEnd = lt < 0 ? n : lt;
    if (textEnd > i) {
      const raw = xml.slice(i, textEnd);
      if (stack.length > 0) on.text(raw, false);
      else if (raw.trim() !== '' && !rootSeen) throw new ReportRefused('not_a_report', 'The attachment is not XML.');
      else if (raw.trim() !== '') throw new ReportRefused('malformed', 'The XML has text outside its root element.');
    }
    if (lt < 0) break;
    if (xml.startsWith('<!--', lt)) {
      const end = xml.indexOf('-->', lt + 4);
      if (end < 0) throw new ReportRefused('malformed', 'The XML ends inside a comment.');
      i = end + 3;
      continue;
    }
    if (xml.startsWith('<![CDATA[', lt)) {
      const end = xml.indexOf(']]>', lt + 9);
      if (end < 0) throw new ReportRefused('malformed', 'The XML ends inside a CDATA section.');
      if (stack.length > 0) on.text(xml.slice(lt + 9, end), true);
      i = end + 3;
      continue;
    }
    if (xml.startsWith('<!', lt)) {
      // <!DOCTYPE and everything it could carry (<!ENTITY …): the door to entity expansion stays shut
      throw new ReportRefused('doctype', 'The XML has a document type declaration, which reports never need.');
    }
    if (xml.startsWith('<?', lt)) {
      const end = xml.indexOf('?>', lt + 2);
      if (end < 0 || end - lt > MAX_TAG_CHARS) throw new ReportRefused('malformed', 'The XML has an unfinished "<?".');
      i = end + 2;
      continue;
    }
    // a tag: up to the first ">" outside a quoted attribute value
    let j = lt + 1;
    let quote = '';
    const limit = Math.min(n, lt + MAX_TAG_CHARS);
    for (; j < limit; j++) {
      const c = xml[j];
      if (quote) {
        if (c === quote) quote = '';
      } else if (c === '"' || c === "'") {
        quote = c;
      } else if (c === '>') {
        break;
      }
    }
    if (j >= n) throw new ReportRefused('malformed', 'The XML ends inside a tag.');
    if (j >= limit) throw new ReportRefused('oversized', `The XML has a tag longer than ${MAX_TAG_CHARS} characters.`);
    const body = xml.slice(lt + 1, j);
    i = j + 1;
    if (body.startsWith('/')) {
      const name = localName(body.slice(1).trim());
      const open = stack.pop();
      if (open !== name) throw new ReportRefused('malformed', `The XML closes <${name.slice(0, 40)}> out of order.`);
      on.close(name, stack.length + 1);
      continue;
    }
    const selfClosing = body.endsWith('/');
    const nameEnd = body.search(/[\s/]|$/);
    const name = localName(body.slice(0, nameEnd));
    if (name === '') throw new ReportRefused('malformed', 'The XML has a tag without a name.');
    if (stack.length === 0 && rootSeen) throw new ReportRefused('malformed', 'The XML has more than one root element.');
    rootSeen = true;
    if (stack.length >= MAX_DEPTH)
      throw new ReportRefused('malformed', `The XML nests deeper than ${MAX_DEPTH} levels.`);
    stack.push(name);
    on.open(name, stack.length);
    if (selfClosing) {
      stack.pop();
      on.close(name, stack.length + 1);
    }
  }
  if (!rootSeen) throw new ReportRefused('not_a_report', 'The attachment holds no XML element.');
  if (stack.length > 0) throw new ReportRefused('malformed', 'The XML ends before its elements are closed.');
}

/** DMARCbis reports may prefix their elements with a namespace; the schema's names are the local ones. */
function localName(qualified: string): string {
  const colon = qualified.indexOf(':');
  return (colon < 0 ? qualified : qualified.slice(colon + 1)).toLowerCase();
}

/** The paths (below <feedback>) whose text is kept; every other text is passed over. */
const KEPT = new Set([
  'report_metadata/org_name',
  'report_metadata/report_id',
  'report_metadata/date_range/begin',
  'report_metadata/date_range/end',
  'policy_published/domain',
  'policy_published/p',
  'policy_published/sp',
  'policy_published/pct',
  'policy_published/adkim',
  'policy_published/aspf',
  'record/row/source_ip',
  'record/row/count',
  'record/row/policy_evaluated/disposition',
  'record/row/policy_evaluated/dkim',
  'record/row/policy_evaluated/spf',
  'record/identifiers/header_from',
  'record/auth_results/dkim/result',
  'record/auth_results/spf/result',
]);

type Values = Map<string, string>;

/** Reads a DMARC aggregate report from its XML text. Throws ReportRefused with the reason. */
export function readAggregateReport(xml: string, limits: ReportLimits = DEFAULT_REPORT_LIMITS): AggregateReport {
  const path: string[] = [];
  const head: Values = new Map();
  const rows: Values[] = [];
  let row: Values | null = null;
  let text = '';
  let keeping = false;

  tokenize(xml, {
    open(name, depth) {
      if (depth === 1 && name !== 'feedback') {
        throw new ReportRefused('not_a_report', `The XML is a <${name.slice(0, 40)}>, not a DMARC aggregate report.`);
      }
      if (depth > 1) path.push(name);
      if (depth === 2 && name === 'record') {
        if (rows.length >= limits.maxRecords) {
          throw new ReportRefused('oversized', `The report has more than ${limits.maxRecords} records.`);
        }
        row = new Map();
        rows.push(row);
      }
      const key = path.join('/');
      keeping = KEPT.has(key) && !(row ?? head).has(key);
      text = '';
    },
    text(raw, cdata) {
      if (!keeping) return;
      text += cdata ? raw : decodeText(raw);
      if (text.length > MAX_VALUE_CHARS) {
        throw new ReportRefused('oversized', `The report has a value longer than ${MAX_VALUE_CHARS} characters.`);
      }
    },
    close(name, depth) {
      if (keeping) (row ?? head).set(path.join('/'), text.trim());
      keeping = false;
      if (depth === 2 && name === 'record') row = null;
      if (depth > 1) path.pop();
    },
  });
  return toReport(head, rows);
}

function required(values: Values, key: string): string {
  const value = values.get(key);
  if (!value) throw new ReportRefused('not_a_report', `The report has no <${key.split('/').pop()}>.`);
  return value;
}

function whole(value: string, what: string, max: number): number {
  // digits only: no sign, exponent or fraction, so a number is what it looks like
  if (!/^\d{1,15}$/.test(value) || Number(value) > max) {
    throw new ReportRefused('malformed', `The report's ${what} "${value.slice(0, 40)}" is not a whole number.`);
  }
  return Number(value);
}

const word = (value: string | undefined): string | null => (value ? value.toLowerCase().slice(0, 32) : null);

function toReport(head: Values, rows: Values[]): AggregateReport {
  const begin = whole(required(head, 'report_metadata/date_range/begin'), 'date range', 2 ** 40);
  const end = whole(required(head, 'report_metadata/date_range/end'), 'date range', 2 ** 40);
  if (end < begin) throw new ReportRefused('malformed', 'The report ends before it begins.');
  const pct = head.get('policy_published/pct');
  return {
    orgName: required(head, 'report_metadata/org_name'),
    reportId: required(head, 'report_metadata/report_id'),
    begin,
    end,
    policy: {
      domain: required(head, 'policy_published/domain').toLowerCase(),
      p: word(head.get('policy_published/p')),
      sp: word(head.get('policy_published/sp')),
      pct: pct ? whole(pct, 'pct', 100) : null,
      adkim: word(head.get('policy_published/adkim')),
      aspf: word(head.get('policy_published/aspf')),
    },
    records: rows.map((values): ReportRecord => {
      const sourceIp = required(values, 'record/row/source_ip');
      if (isIP(sourceIp) === 0) {
        throw new ReportRefused('malformed', `The report's source "${sourceIp.slice(0, 60)}" is not an IP address.`);
      }
      return {
        sourceIp,
        count: whole(required(values, 'record/row/count'), 'count', 2 ** 31),
        disposition: word(values.get('record/row/policy_evaluated/disposition')) ?? 'none',
        dkimAligned: word(values.get('record/row/policy_evaluated/dkim')) ?? 'fail',
        spfAligned: word(values.get('record/row/policy_evaluated/spf')) ?? 'fail',
        dkimResult: word(values.get('record/auth_results/dkim/result')),
        spfResult: word(values.get('record/auth_results/spf/result')),
        headerFrom: required(values, 'record/identifiers/header_from').toLowerCase(),
      };
    }),
  };
}
