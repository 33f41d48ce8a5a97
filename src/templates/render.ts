/*
 * Template text: parsing, validation and rendering. Pure: no I/O and no project imports, so the
 * API (validation, preview) and the engine (sending) share one definition of the markup.
 *
 * Markup
 * - `{name}`: a variable; `name` is `[a-z][a-z0-9_]*` and must be one of KNOWN_VARIABLES.
 * - `{Hi|Hello|Hey}`: spintax, one option per message. Options may hold variables
 *   (`{Hi {recipient_first_name}|Hello}`) but not another spintax group. Empty options are
 *   allowed (`{|Thanks!}`).
 * - `{{` and `}}` outside a group are a literal `{` and `}`. Inside a group there are no escapes:
 *   `{` opens a variable and `}` closes the innermost open brace, so `{{{topic}}}` is a literal
 *   `{`, the topic, and a literal `}`.
 * - One exception keeps the obvious meaning of a group whose first option starts with a
 *   variable: `{{recipient_first_name}|there}` is spintax, not an escape. `{{` opens a group when
 *   it is followed by `…}` and then, still inside that group, a `|` before the group closes.
 * - Anything else with braces is an error, reported with its position: unbalanced `{` or `}`,
 *   nested spintax, an empty `{}`, an invalid variable name (a group without `|` must be a
 *   variable, so `{Foo}` is an error), or an unknown variable.
 *
 * Positions: `offset` is 0-based in UTF-16 code units (JavaScript string indexes); `line` and
 * `column` are 1-based, and `\n`, `\r\n` and `\r` each end a line.
 *
 * `{day_of_week}` and `{date}` are the day the message is sent, in the sender's time zone; the
 * caller fills them, as it fills every variable.
 */

export const KNOWN_VARIABLES = [
  'recipient_name',
  'recipient_first_name',
  'recipient_email',
  'sender_name',
  'sender_first_name',
  'sender_email',
  'topic',
  'company',
  'day_of_week',
  'date',
] as const;

export type TemplateVariable = (typeof KNOWN_VARIABLES)[number];

export interface TextProblem {
  /** Full sentence with the position, e.g. `unbalanced "{" at line 2, column 5`. */
  message: string;
  /** 0-based index into the text. */
  offset: number;
  /** 1-based. */
  line: number;
  /** 1-based. */
  column: number;
}

export interface TextAnalysis {
  /** Known variables the text uses (spintax options included), sorted, unique. */
  variables: TemplateVariable[];
  /** Every problem found (capped at MAX_PROBLEMS), ordered by offset. Empty when the text is valid. */
  problems: TextProblem[];
}

export type VariableValues = Partial<Record<TemplateVariable, string>>;

export interface RenderedMessage {
  subject: string;
  body: string;
  /** `bodyToHtml(body)`. */
  html: string;
}

/** The text does not follow the markup. `problems` is what analyzeText reports. */
export class TemplateSyntaxError extends Error {
  constructor(
    readonly problems: readonly TextProblem[],
    /** Which part of a message was wrong, when rendering a whole message. */
    readonly part?: 'subject' | 'body',
  ) {
    super(problems.map((p) => (part ? `${part}: ${p.message}` : p.message)).join('\n'));
    this.name = 'TemplateSyntaxError';
  }
}

/** A variable the text uses has no value: the caller must fill every used variable (see fillWithSamples). */
export class MissingVariableError extends Error {
  constructor(readonly missing: readonly TemplateVariable[]) {
    super(`no value for ${missing.map((name) => `"${name}"`).join(', ')}`);
    this.name = 'MissingVariableError';
  }
}

/** Preview values for variables the caller did not give. Fixed, so previews are reproducible. */
export const SAMPLE_VALUES: Record<TemplateVariable, string> = {
  recipient_name: 'Jordan Miller',
  recipient_first_name: 'Jordan',
  recipient_email: 'jordan.miller@example.com',
  sender_name: 'Alex Carter',
  sender_first_name: 'Alex',
  sender_email: 'alex.carter@example.org',
  topic: 'the quarterly planning',
  company: 'Northfield Logistics',
  day_of_week: 'Thursday',
  date: 'March 14',
};

/** Enough to show a user what is wrong without flooding a response with a pathological text. */
export const MAX_PROBLEMS = 100;

export function analyzeText(text: string): TextAnalysis {
  const parsed = parse(text);
  return { variables: parsed.variables, problems: parsed.problems };
}

/**
 * Renders one text. Throws TemplateSyntaxError when the text is invalid, MissingVariableError when
 * a variable it uses (in any spintax option) has no value, RangeError when seed is not a safe
 * integer. Values are inserted as they are, never parsed as markup.
 */
export function renderText(text: string, values: VariableValues, seed: number): string {
  checkSeed(seed);
  const parsed = parse(text);
  if (parsed.problems.length > 0) throw new TemplateSyntaxError(parsed.problems);
  checkValues(parsed.variables, values);
  return renderNodes(parsed.nodes, values, seed, 0);
}

/**
 * Renders subject and body with one seed; the body's spintax groups are numbered after the
 * subject's, so each group of the message picks independently. The subject becomes one line:
 * line breaks and runs of white space turn into one space, and it is trimmed.
 */
export function renderMessage(
  parts: { subject: string; body: string },
  values: VariableValues,
  seed: number,
): RenderedMessage {
  checkSeed(seed);
  const subject = parse(parts.subject);
  if (subject.problems.length > 0) throw new TemplateSyntaxError(subject.problems, 'subject');
  const body = parse(parts.body);
  if (body.problems.length > 0) throw new TemplateSyntaxError(body.problems, 'body');
  checkValues(sortedUnique([...subject.variables, ...body.variables]), values);
  const renderedSubject = renderNodes(subject.nodes, values, seed, 0).replace(/\s+/g, ' ').trim();
  const renderedBody = renderNodes(body.nodes, values, seed, subject.groupCount);
  return { subject: renderedSubject, body: renderedBody, html: bodyToHtml(renderedBody) };
}

/**
 * Plain text to escaped HTML: paragraphs (split on blank lines) become `<p>…</p>`, joined by
 * `\n`; a single line break inside a paragraph becomes `<br>`. `& < > " '` are escaped, so no
 * markup from the text survives. `"Hi,\n\nLine 1\nLine 2"` → `<p>Hi,</p>\n<p>Line 1<br>Line 2</p>`.
 */
export function bodyToHtml(body: string): string {
  return body
    .replace(/\r\n?/g, '\n')
    .split(/\n[ \t]*\n/)
    .map((paragraph) => paragraph.replace(/^\n+|\n+$/g, ''))
    .filter((paragraph) => paragraph.trim() !== '')
    .map((paragraph) => `<p>${escapeHtml(paragraph).replace(/\n/g, '<br>')}</p>`)
    .join('\n');
}

/**
 * Values for the variables a text uses: the caller's value when given (even an empty string),
 * else the sample. `usedSamples` lists, sorted, the variables that fell back to a sample.
 */
export function fillWithSamples(
  used: readonly TemplateVariable[],
  given: Record<string, string>,
): { values: VariableValues; usedSamples: TemplateVariable[] } {
  const values: VariableValues = {};
  const usedSamples: TemplateVariable[] = [];
  for (const name of used) {
    const value = Object.hasOwn(given, name) ? given[name] : undefined;
    if (typeof value === 'string') {
      values[name] = value;
    } else {
      values[name] = SAMPLE_VALUES[name];
      usedSamples.push(name);
    }
  }
  return { values, usedSamples: sortedUnique(usedSamples) };
}

// ---------------------------------------------------------------------------------------------
// Parsing

type Part = { kind: 'text'; text: string } | { kind: 'variable'; name: TemplateVariable };
type Node = Part | { kind: 'spintax'; options: Part[][] };

interface Parsed {
  nodes: Node[];
  variables: TemplateVariable[];
  problems: TextProblem[];
  /** Spintax groups, numbered 0.. in order of appearance; each picks from seed + its number. */
  groupCount: number;
}

interface RawProblem {
  offset: number;
  /** What is wrong, put before the position. */
  what: string;
  /** Put after the position. */
  hint?: string;
}

const OPEN = 0x7b; // {
const CLOSE = 0x7d; // }
const PIPE = 0x7c; // |
const NAME = /^[a-z][a-z0-9_]*$/;
const KNOWN = new Set<string>(KNOWN_VARIABLES);
const KNOWN_LIST = `known variables: ${KNOWN_VARIABLES.join(', ')}`;

function parse(text: string): Parsed {
  const nodes: Node[] = [];
  const raw: RawProblem[] = [];
  const used = new Set<TemplateVariable>();
  let groupCount = 0;
  let literal = '';
  const flush = (): void => {
    if (literal !== '') nodes.push({ kind: 'text', text: literal });
    literal = '';
  };

  let i = 0;
  while (i < text.length && raw.length < MAX_PROBLEMS) {
    const c = text.charCodeAt(i);
    if (c === OPEN) {
      if (text.charCodeAt(i + 1) === OPEN && !opensGroupWithVariable(text, i)) {
        literal += '{';
        i += 2;
        continue;
      }
      const end = matchingClose(text, i);
      if (end < 0) {
        // Report it, read it as a literal and go on, so later problems are found too.
        raw.push({ offset: i, what: 'unbalanced "{"' });
        literal += '{';
        i += 1;
        continue;
      }
      flush();
      const node = parseGroup(text, i, end, raw, used);
      if (node) {
        nodes.push(node);
        if (node.kind === 'spintax') groupCount += 1;
      }
      i = end + 1;
    } else if (c === CLOSE) {
      if (text.charCodeAt(i + 1) === CLOSE) {
        literal += '}';
        i += 2;
      } else {
        raw.push({ offset: i, what: 'unbalanced "}"' });
        literal += '}';
        i += 1;
      }
    } else {
      let j = i + 1;
      while (j < text.length && text.charCodeAt(j) !== OPEN && text.charCodeAt(j) !== CLOSE) j += 1;
      literal += text.slice(i, j);
      i = j;
    }
  }
  flush();

  return {
    nodes,
    variables: sortedUnique([...used]),
    problems: locate(text, raw.slice(0, MAX_PROBLEMS)),
    groupCount,
  };
}

/** Index of the `}` that closes the `{` at `start` (no escapes inside a group), or -1. */
function matchingClose(text: string, start: number): number {
  let depth = 0;
  for (let j = start; j < text.length; j += 1) {
    const c = text.charCodeAt(j);
    if (c === OPEN) depth += 1;
    else if (c === CLOSE) {
      depth -= 1;
      if (depth === 0) return j;
    }
  }
  return -1;
}

/**
 * At a `{{` outside any group: is it `{` + `{…}` + … `|` … `}`, a spintax group whose first option
 * starts with a variable? Gives up at a third level of braces, so each call scans no further than
 * the next `{{` and parsing stays linear.
 */
function opensGroupWithVariable(text: string, start: number): boolean {
  let j = start + 2;
  while (j < text.length) {
    const c = text.charCodeAt(j);
    if (c === OPEN || c === PIPE) return false;
    if (c === CLOSE) break;
    j += 1;
  }
  if (j >= text.length) return false;
  let depth = 1;
  let sawPipe = false;
  for (j += 1; j < text.length; j += 1) {
    const c = text.charCodeAt(j);
    if (c === OPEN) {
      depth += 1;
      if (depth > 2) return false;
    } else if (c === CLOSE) {
      depth -= 1;
      if (depth === 0) return sawPipe;
    } else if (c === PIPE && depth === 1) {
      sawPipe = true;
    }
  }
  return false;
}

/** The group `text[start..end]`, braces included: a variable or a spintax group. */
function parseGroup(
  text: string,
  start: number,
  end: number,
  raw: RawProblem[],
  used: Set<TemplateVariable>,
): Node | null {
  const options: { offset: number; content: string }[][] = [[]];
  const inner: { offset: number; content: string }[] = [];
  let j = start + 1;
  let textStart = j;
  const pushText = (upTo: number): void => {
    if (upTo > textStart) options[options.length - 1].push({ offset: -1, content: text.slice(textStart, upTo) });
  };
  while (j < end) {
    const c = text.charCodeAt(j);
    if (c === PIPE) {
      pushText(j);
      options.push([]);
      j += 1;
      textStart = j;
    } else if (c === OPEN) {
      pushText(j);
      const close = matchingClose(text, j); // < end: the group is balanced
      const piece = { offset: j, content: text.slice(j + 1, close) };
      options[options.length - 1].push(piece);
      inner.push(piece);
      j = close + 1;
      textStart = j;
    } else {
      j += 1;
    }
  }
  pushText(end);

  if (options.length === 1) {
    // No `|`: the whole group must be one variable.
    const nested = inner.find((piece) => piece.content.includes('|'));
    if (nested) {
      raw.push({ offset: nested.offset, what: 'nested spintax' });
      return null;
    }
    const name = variable(text.slice(start + 1, end), start, raw);
    if (name === null) return null;
    used.add(name);
    return { kind: 'variable', name };
  }

  let ok = true;
  const parts: Part[][] = options.map((option) =>
    option.map((piece): Part => {
      if (piece.offset < 0) return { kind: 'text', text: piece.content };
      if (piece.content.includes('|')) {
        raw.push({ offset: piece.offset, what: 'nested spintax' });
        ok = false;
        return { kind: 'text', text: '' };
      }
      const name = variable(piece.content, piece.offset, raw);
      if (name === null) {
        ok = false;
        return { kind: 'text', text: '' };
      }
      used.add(name);
      return { kind: 'variable', name };
    }),
  );
  return ok ? { kind: 'spintax', options: parts } : null;
}

/** Checks the content of a `{…}` that must be a variable; reports and returns null if it is not. */
function variable(content: string, offset: number, raw: RawProblem[]): TemplateVariable | null {
  if (content === '') {
    raw.push({ offset, what: 'empty "{}"' });
    return null;
  }
  if (!NAME.test(content)) {
    raw.push({
      offset,
      what: `invalid variable name "${shorten(content)}"`,
      hint: 'variable names match [a-z][a-z0-9_]* and spintax options are separated by "|"',
    });
    return null;
  }
  if (!KNOWN.has(content)) {
    raw.push({ offset, what: `unknown variable "${shorten(content)}"`, hint: KNOWN_LIST });
    return null;
  }
  return content as TemplateVariable;
}

function shorten(content: string): string {
  const oneLine = content.replace(/\r\n?|\n/g, '\\n');
  return oneLine.length > 40 ? `${oneLine.slice(0, 40)}…` : oneLine;
}

/** Adds line and column, orders by offset. */
function locate(text: string, raw: RawProblem[]): TextProblem[] {
  if (raw.length === 0) return [];
  const lineStarts = [0];
  for (let j = 0; j < text.length; j += 1) {
    const c = text.charCodeAt(j);
    if (c === 0x0a) lineStarts.push(j + 1);
    else if (c === 0x0d && text.charCodeAt(j + 1) !== 0x0a) lineStarts.push(j + 1);
  }
  return [...raw]
    .sort((a, b) => a.offset - b.offset)
    .map(({ offset, what, hint }) => {
      let low = 0;
      let high = lineStarts.length - 1;
      while (low < high) {
        const mid = (low + high + 1) >> 1;
        if (lineStarts[mid] <= offset) low = mid;
        else high = mid - 1;
      }
      const line = low + 1;
      const column = offset - lineStarts[low] + 1;
      const message = `${what} at line ${line}, column ${column}${hint ? `; ${hint}` : ''}`;
      return { message, offset, line, column };
    });
}

// ---------------------------------------------------------------------------------------------
// Rendering

function checkSeed(seed: number): void {
  if (!Number.isSafeInteger(seed)) throw new RangeError(`seed must be a safe integer, got ${String(seed)}`);
}

function checkValues(used: readonly TemplateVariable[], values: VariableValues): void {
  const missing = used.filter((name) => typeof values[name] !== 'string');
  if (missing.length > 0) throw new MissingVariableError(missing);
}

function renderNodes(nodes: readonly Node[], values: VariableValues, seed: number, firstGroup: number): string {
  let group = firstGroup;
  let out = '';
  const renderPart = (part: Part): string => (part.kind === 'text' ? part.text : (values[part.name] ?? ''));
  for (const node of nodes) {
    if (node.kind === 'spintax') {
      const option = node.options[choose(seed, group, node.options.length)];
      group += 1;
      for (const part of option) out += renderPart(part);
    } else {
      out += renderPart(node);
    }
  }
  return out;
}

/** murmur3's 32-bit finalizer: a bijection that spreads every input bit over the output. */
function fmix32(value: number): number {
  let h = value >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/**
 * Option index for spintax group number `group`: a hash of the whole seed (both 32-bit halves, so
 * negative and large seeds differ) and the group number, so groups pick independently of each
 * other and the same seed always picks the same options.
 */
function choose(seed: number, group: number, count: number): number {
  const high = Math.floor(seed / 0x1_0000_0000);
  const low = seed - high * 0x1_0000_0000;
  let h = fmix32(low ^ 0x9e3779b9);
  h = fmix32(h ^ fmix32(high + 0x7f4a7c15));
  h = fmix32(h ^ Math.imul(group + 1, 0x27d4eb2d));
  return Math.floor((h / 0x1_0000_0000) * count);
}

// ---------------------------------------------------------------------------------------------

function sortedUnique<T extends string>(items: readonly T[]): T[] {
  return [...new Set(items)].sort();
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]);
}
