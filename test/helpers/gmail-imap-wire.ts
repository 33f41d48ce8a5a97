// The Gmail-like test server's wire format (gmail-imap-server.ts): a command's tokens, quoted
// strings, and message sets. Every parser reads its input once, left to right.
// ---- the wire: tokens of a command -------------------------------------------------------------

export type Token = { t: 'atom'; v: string } | { t: 'string'; v: string } | { t: 'list'; v: Token[] };

/**
 * Tokens of a command whose literals are already read: `text` holds the lines, `literals[i]` the
 * literal announced at the end of line i. One pass; brackets inside an atom (BODY[...]<0.10>) are
 * part of the atom.
 */
export function tokenize(lines: string[], literals: string[]): Token[] {
  const root: Token[] = [];
  const stack: Token[][] = [root];
  const top = () => stack[stack.length - 1]!;
  lines.forEach((line, index) => {
    // a literal is announced only at the very end of a line: one check per line, not per brace
    const announced = /\{\d+\+?\}$/.exec(line);
    const literalAt = announced && index in literals ? announced.index : -1;
    let i = 0;
    while (i < line.length) {
      const c = line[i]!;
      if (c === ' ') {
        i++;
      } else if (c === '(') {
        const list: Token[] = [];
        top().push({ t: 'list', v: list });
        stack.push(list);
        i++;
      } else if (c === ')') {
        if (stack.length > 1) stack.pop();
        i++;
      } else if (c === '"') {
        let value = '';
        i++;
        while (i < line.length && line[i] !== '"') {
          if (line[i] === '\\' && i + 1 < line.length) i++;
          value += line[i];
          i++;
        }
        i++;
        top().push({ t: 'string', v: value });
      } else if (i === literalAt) {
        top().push({ t: 'string', v: literals[index] ?? '' });
        i = line.length;
      } else {
        let value = '';
        let depth = 0;
        while (i < line.length) {
          const d = line[i]!;
          if (depth === 0 && (d === ' ' || d === ')' || d === '(')) break;
          if (d === '[') depth++;
          if (d === ']') depth = Math.max(0, depth - 1);
          value += d;
          i++;
        }
        top().push({ t: 'atom', v: value });
      }
    }
  });
  return root;
}

export const text = (token: Token | undefined): string => (token && token.t !== 'list' ? token.v : '');

export function quote(value: string): string {
  // non-ASCII or line breaks go as a literal
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code > 126 || code === 13 || code === 10) return `{${Buffer.byteLength(value, 'latin1')}}\r\n${value}`;
  }
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

export const nstring = (value: string | undefined) => (value ? quote(value) : 'NIL');

export function parseSet(set: string, max: number): Array<[number, number]> {
  return set.split(',').map((part) => {
    const [a, b] = part.split(':');
    const from = a === '*' ? max : Number(a);
    const to = b === undefined ? from : b === '*' ? max : Number(b);
    return [Math.min(from, to), Math.max(from, to)];
  });
}

export function inRanges(ranges: Array<[number, number]>, n: number): boolean {
  return ranges.some(([a, b]) => n >= a && n <= b);
}
