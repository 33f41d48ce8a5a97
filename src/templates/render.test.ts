import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { TemplateVariable, TextProblem, VariableValues } from './render.js';
import {
  KNOWN_VARIABLES,
  MAX_PROBLEMS,
  MissingVariableError,
  SAMPLE_VALUES,
  TemplateSyntaxError,
  analyzeText,
  bodyToHtml,
  fillWithSamples,
  renderMessage,
  renderText,
} from './render.js';

const KNOWN_LIST = KNOWN_VARIABLES.join(', ');

/** Just the positions and messages, for exact comparisons. */
function problemsOf(text: string): Pick<TextProblem, 'message' | 'line' | 'column' | 'offset'>[] {
  return analyzeText(text).problems;
}

function syntaxError(fn: () => unknown): TemplateSyntaxError {
  try {
    fn();
  } catch (error) {
    if (error instanceof TemplateSyntaxError) return error;
    throw error;
  }
  throw new Error('expected a TemplateSyntaxError');
}

describe('analyzeText: valid markup', () => {
  it('accepts plain text, including a lone "|"', () => {
    expect(analyzeText('Hello there | and more')).toEqual({ variables: [], problems: [] });
    expect(analyzeText('')).toEqual({ variables: [], problems: [] });
  });

  it('lists the variables used, sorted and unique, spintax options included', () => {
    const text = '{topic} for {recipient_first_name}: {Hi {sender_first_name}|Hello {topic}} {date}';
    expect(analyzeText(text)).toEqual({
      variables: ['date', 'recipient_first_name', 'sender_first_name', 'topic'],
      problems: [],
    });
  });

  it('accepts every known variable', () => {
    const text = KNOWN_VARIABLES.map((name) => `{${name}}`).join(' ');
    expect(analyzeText(text)).toEqual({ variables: [...KNOWN_VARIABLES].sort(), problems: [] });
  });

  it('reads "{{" and "}}" as literal braces', () => {
    expect(analyzeText('{{topic}} and {{ and }}')).toEqual({ variables: [], problems: [] });
    expect(renderText('{{topic}} and {{ and }}', {}, 1)).toBe('{topic} and { and }');
  });

  it('reads "{{{topic}}}" as a literal brace, the variable and a literal brace', () => {
    expect(analyzeText('{{{topic}}}').variables).toEqual(['topic']);
    expect(renderText('{{{topic}}}', { topic: 'x' }, 1)).toBe('{x}');
  });

  it('reads "{{name}|…}" as spintax whose first option starts with a variable', () => {
    expect(analyzeText('Hi {{recipient_first_name}|there},')).toEqual({
      variables: ['recipient_first_name'],
      problems: [],
    });
    const outputs = new Set(
      Array.from({ length: 50 }, (_, seed) =>
        renderText('Hi {{recipient_first_name}|there},', { recipient_first_name: 'Jo' }, seed),
      ),
    );
    expect(outputs).toEqual(new Set(['Hi Jo,', 'Hi there,']));
  });

  it('allows empty spintax options', () => {
    expect(analyzeText('{|Thanks!}').problems).toEqual([]);
    expect(analyzeText('{|}').problems).toEqual([]);
    const outputs = new Set(Array.from({ length: 50 }, (_, seed) => renderText('a{|b}c', {}, seed)));
    expect(outputs).toEqual(new Set(['ac', 'abc']));
  });

  it('allows variables and text in spintax options', () => {
    expect(analyzeText('{Hi {recipient_first_name}|Hello} {a|b|c d}')).toEqual({
      variables: ['recipient_first_name'],
      problems: [],
    });
  });
});

describe('analyzeText: problems with exact positions', () => {
  it('reports an unbalanced "{"', () => {
    expect(problemsOf('Hi\nthere {')).toEqual([
      { message: 'unbalanced "{" at line 2, column 7', offset: 9, line: 2, column: 7 },
    ]);
    expect(problemsOf('a\n    {topic')).toEqual([
      { message: 'unbalanced "{" at line 2, column 5', offset: 6, line: 2, column: 5 },
    ]);
  });

  it('reports an unclosed group at its "{" and still reads what follows', () => {
    expect(problemsOf('{Hi {recipient_first_name} there')).toEqual([
      { message: 'unbalanced "{" at line 1, column 1', offset: 0, line: 1, column: 1 },
    ]);
    expect(analyzeText('{Hi {recipient_first_name} there').variables).toEqual(['recipient_first_name']);
  });

  it('reports an unbalanced "}"', () => {
    expect(problemsOf('Hi}')).toEqual([
      { message: 'unbalanced "}" at line 1, column 3', offset: 2, line: 1, column: 3 },
    ]);
    expect(problemsOf('{topic}}')).toEqual([
      { message: 'unbalanced "}" at line 1, column 8', offset: 7, line: 1, column: 8 },
    ]);
  });

  it('reports nested spintax at the inner group', () => {
    expect(problemsOf('x {Hi|{Hello|Hey}}')).toEqual([
      { message: 'nested spintax at line 1, column 7', offset: 6, line: 1, column: 7 },
    ]);
    expect(problemsOf('{x {a|b}}')).toEqual([
      { message: 'nested spintax at line 1, column 4', offset: 3, line: 1, column: 4 },
    ]);
  });

  it('reports an empty "{}", alone or as an option', () => {
    expect(problemsOf('a {} b')).toEqual([
      { message: 'empty "{}" at line 1, column 3', offset: 2, line: 1, column: 3 },
    ]);
    expect(problemsOf('{a|{}}')).toEqual([
      { message: 'empty "{}" at line 1, column 4', offset: 3, line: 1, column: 4 },
    ]);
  });

  it('reports an invalid variable name: a group without "|" must be a variable', () => {
    const hint = 'variable names match [a-z][a-z0-9_]* and spintax options are separated by "|"';
    expect(problemsOf('{Foo}')).toEqual([
      { message: `invalid variable name "Foo" at line 1, column 1; ${hint}`, offset: 0, line: 1, column: 1 },
    ]);
    expect(problemsOf('a\n{first name}')[0]).toMatchObject({ line: 2, column: 1, offset: 2 });
    expect(problemsOf('{1st}')[0].message).toMatch(/^invalid variable name "1st"/);
    expect(problemsOf('{ topic }')[0].message).toMatch(/^invalid variable name " topic "/);
    expect(problemsOf('{Hello {topic}}')[0].message).toMatch(
      /^invalid variable name "Hello \{topic\}" at line 1, column 1/,
    );
    expect(problemsOf('{a|{Bad}}')[0]).toMatchObject({ offset: 3, column: 4 });
  });

  it('reports an unknown variable and lists the known ones', () => {
    expect(problemsOf('Hello {foo}')).toEqual([
      {
        message: `unknown variable "foo" at line 1, column 7; known variables: ${KNOWN_LIST}`,
        offset: 6,
        line: 1,
        column: 7,
      },
    ]);
    expect(problemsOf('{Hi|Hey {first_name}}')[0]).toMatchObject({ offset: 8, line: 1, column: 9 });
  });

  it('counts lines after \\n, \\r\\n and \\r', () => {
    expect(problemsOf('a\r\nb\rc\n  }')).toEqual([
      { message: 'unbalanced "}" at line 4, column 3', offset: 9, line: 4, column: 3 },
    ]);
  });

  it('reports every problem in order of offset', () => {
    const text = 'x {a|{Bad}|{}|{nope}} }\n{Foo} {';
    expect(problemsOf(text).map((p) => [p.message.split(' at ')[0], p.line, p.column])).toEqual([
      ['invalid variable name "Bad"', 1, 6],
      ['empty "{}"', 1, 12],
      ['unknown variable "nope"', 1, 15],
      ['unbalanced "}"', 1, 23],
      ['invalid variable name "Foo"', 2, 1],
      ['unbalanced "{"', 2, 7],
    ]);
  });

  it('shortens long names in messages', () => {
    const message = problemsOf(`{${'x'.repeat(100)}}`)[0].message;
    expect(message).toMatch(/^unknown variable "x{40}…" at line 1, column 1/);
  });

  it(`stops after ${MAX_PROBLEMS} problems and stays fast on pathological text`, () => {
    expect(problemsOf(' }'.repeat(1000))).toHaveLength(MAX_PROBLEMS);
    expect(problemsOf('{ '.repeat(20_000))).toHaveLength(MAX_PROBLEMS);
    expect(problemsOf('{{a}|'.repeat(20_000))).toHaveLength(MAX_PROBLEMS);
    expect(analyzeText('{{topic}}'.repeat(20_000)).problems).toEqual([]);
    expect(analyzeText('{{{{topic}|x} '.repeat(20_000))).toEqual({ variables: ['topic'], problems: [] });
  });
});

describe('renderText', () => {
  const values: VariableValues = { recipient_first_name: 'Jordan', topic: 'the Q3 roadmap' };

  it('fills variables', () => {
    expect(renderText('Hi {recipient_first_name}, about {topic}.', values, 1)).toBe('Hi Jordan, about the Q3 roadmap.');
  });

  it('inserts values literally, never parsing them as markup', () => {
    expect(renderText('[{topic}]', { topic: '{recipient_first_name} {{|}}' }, 1)).toBe(
      '[{recipient_first_name} {{|}}]',
    );
  });

  it('throws TemplateSyntaxError with the problems of an invalid text', () => {
    const error = syntaxError(() => renderText('Hello {foo} {', values, 1));
    expect(error.problems).toEqual(analyzeText('Hello {foo} {').problems);
    expect(error.problems).toHaveLength(2);
    expect(error.message).toContain('unknown variable "foo" at line 1, column 7');
    expect(error.part).toBeUndefined();
  });

  it('throws MissingVariableError for a used variable without a value, even in an option not picked', () => {
    expect(() => renderText('{a|b {company}} {date}', {}, 1)).toThrow(MissingVariableError);
    try {
      renderText('{a|b {company}} {date}', { date: 'March 14' }, 1);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(MissingVariableError);
      expect((error as MissingVariableError).missing).toEqual(['company']);
    }
    expect(renderText('{topic}', { topic: '' }, 1)).toBe('');
  });

  it('accepts any safe integer seed and rejects others', () => {
    for (const seed of [0, -1, 1, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, 2 ** 32, -(2 ** 32)]) {
      expect(['a', 'b']).toContain(renderText('{a|b}', {}, seed));
    }
    for (const seed of [1.5, Number.NaN, Infinity, 2 ** 53]) {
      expect(() => renderText('{a|b}', {}, seed)).toThrow(RangeError);
    }
  });

  it('is stable across versions: the same seed picks the same options as when this was written', () => {
    const text = '{Hi|Hello|Hey} {a|b|c|d}{1|2|3}';
    expect([0, 1, 2, -1, 123_456_789].map((seed) => renderText(text, {}, seed))).toEqual(PINNED);
  });

  it('reaches every option and picks each group independently', () => {
    const seen = new Set(Array.from({ length: 300 }, (_, seed) => renderText('{a|b|c|d|e}', {}, seed)));
    expect(seen).toEqual(new Set(['a', 'b', 'c', 'd', 'e']));

    const ten = '{0|1}'.repeat(10);
    let uniform = 0;
    for (let seed = 0; seed < 100; seed += 1) {
      const out = renderText(ten, {}, seed);
      if (out === '0'.repeat(10) || out === '1'.repeat(10)) uniform += 1;
    }
    expect(uniform).toBeLessThan(5);
  });

  it('gives different seeds different results, negative and large seeds included', () => {
    const text = '{0|1}'.repeat(20);
    const outputs = new Set(
      [0, 1, -1, 2 ** 32, -(2 ** 32), 2 ** 40, Number.MAX_SAFE_INTEGER].map((seed) => renderText(text, {}, seed)),
    );
    expect(outputs.size).toBe(7);
  });
});

describe('renderMessage', () => {
  it('renders subject, body and html with one seed', () => {
    const message = renderMessage(
      { subject: 'Re: {topic}', body: 'Hi {recipient_first_name},\n\nSee <this> & that.\nThanks' },
      { topic: 'the plan', recipient_first_name: 'Jordan' },
      7,
    );
    expect(message).toEqual({
      subject: 'Re: the plan',
      body: 'Hi Jordan,\n\nSee <this> & that.\nThanks',
      html: '<p>Hi Jordan,</p>\n<p>See &lt;this&gt; &amp; that.<br>Thanks</p>',
    });
  });

  it('makes the subject one trimmed line', () => {
    expect(
      renderMessage({ subject: ' {|Quick }question\r\nabout  {topic} ', body: 'x' }, { topic: 'it' }, 0).subject,
    ).toMatch(/^(Quick )?question about it$/);
  });

  it('numbers the body groups after the subject groups', () => {
    let same = 0;
    for (let seed = 0; seed < 64; seed += 1) {
      const message = renderMessage({ subject: '{a|b}', body: '{a|b}' }, {}, seed);
      expect(message.body).toBe(renderText('{x|y}{a|b}', {}, seed).slice(1));
      if (message.subject === message.body) same += 1;
    }
    expect(same).toBeGreaterThan(10);
    expect(same).toBeLessThan(54);
  });

  it('says which part is invalid', () => {
    expect(syntaxError(() => renderMessage({ subject: '{Foo}', body: '{' }, {}, 1)).part).toBe('subject');
    const error = syntaxError(() => renderMessage({ subject: 'ok', body: 'x\n{' }, {}, 1));
    expect(error.part).toBe('body');
    expect(error.message).toBe('body: unbalanced "{" at line 2, column 1');
  });

  it('needs values for the variables of both parts', () => {
    expect(() => renderMessage({ subject: '{topic}', body: '{date}' }, { date: 'March 14' }, 1)).toThrow(
      MissingVariableError,
    );
  });
});

describe('bodyToHtml', () => {
  it('splits paragraphs on blank lines and breaks single lines', () => {
    expect(bodyToHtml('Hi,\n\nLine 1\nLine 2\n\n\n \nBye')).toBe('<p>Hi,</p>\n<p>Line 1<br>Line 2</p>\n<p>Bye</p>');
    expect(bodyToHtml('a\r\n\r\nb\r\nc')).toBe('<p>a</p>\n<p>b<br>c</p>');
    expect(bodyToHtml('\n\nonly\n\n')).toBe('<p>only</p>');
    expect(bodyToHtml('')).toBe('');
    expect(bodyToHtml(' \n\t\n')).toBe('');
  });

  it('escapes & < > " \'', () => {
    expect(bodyToHtml(`<script>alert("x" & 'y')</script>`)).toBe(
      '<p>&lt;script&gt;alert(&quot;x&quot; &amp; &#39;y&#39;)&lt;/script&gt;</p>',
    );
  });
});

describe('fillWithSamples', () => {
  it('prefers given values, falls back to samples and lists them sorted', () => {
    const result = fillWithSamples(['topic', 'date', 'recipient_first_name'], {
      topic: 'X',
      recipient_first_name: '',
      other: 'y',
    });
    expect(result).toEqual({
      values: { topic: 'X', recipient_first_name: '', date: SAMPLE_VALUES.date },
      usedSamples: ['date'],
    });
    expect(fillWithSamples(['topic', 'company'], {}).usedSamples).toEqual(['company', 'topic']);
  });

  it('has a sample for every variable, and samples render', () => {
    expect(Object.keys(SAMPLE_VALUES).sort()).toEqual([...KNOWN_VARIABLES].sort());
    expect(SAMPLE_VALUES.recipient_name).toBe('Jordan Miller');
    expect(SAMPLE_VALUES.date).toMatch(/^[A-Z][a-z]+ \d{1,2}$/);
    const text = 'Hi {recipient_first_name}, {topic} on {day_of_week}, {date}';
    const { values } = fillWithSamples(analyzeText(text).variables, {});
    expect(renderText(text, values, 0)).toBe('Hi Jordan, the quarterly planning on Thursday, March 14');
  });

  it('does not read inherited properties of the given object', () => {
    const given = Object.create({ topic: 'inherited' }) as Record<string, string>;
    expect(fillWithSamples(['topic'], given).usedSamples).toEqual(['topic']);
  });
});

// ---------------------------------------------------------------------------------------------
// Properties over generated templates

type ModelPart = { kind: 'text'; text: string } | { kind: 'variable'; name: TemplateVariable };
type ModelNode = ModelPart | { kind: 'escape'; brace: '{' | '}' } | { kind: 'spintax'; options: ModelPart[][] };

const chars = (list: string) => fc.constantFrom(...list.split(''));
/** Text outside groups: anything but braces ("|" is plain text there). */
const topText = fc.string({ unit: chars('ab xyZ|,.!\n<>&é'), minLength: 1, maxLength: 8 });
/** Text inside a spintax option: no braces, no "|". */
const optionText = fc.string({ unit: chars('ab xyZ,.!\n<>&é'), maxLength: 6 });
const variableName = fc.constantFrom(...KNOWN_VARIABLES);
const optionPart: fc.Arbitrary<ModelPart> = fc.oneof(
  optionText.map((text) => ({ kind: 'text' as const, text })),
  variableName.map((name) => ({ kind: 'variable' as const, name })),
);
const option = fc.array(optionPart, { maxLength: 3 });
const node: fc.Arbitrary<ModelNode> = fc.oneof(
  topText.map((text) => ({ kind: 'text' as const, text })),
  variableName.map((name) => ({ kind: 'variable' as const, name })),
  fc.constantFrom('{' as const, '}' as const).map((brace) => ({ kind: 'escape' as const, brace })),
  fc.array(option, { minLength: 2, maxLength: 4 }).map((options) => ({ kind: 'spintax' as const, options })),
);
const template = fc.array(node, { maxLength: 12 });

/** Values, possibly full of markup characters, which must come out as they are. */
const anyValues = fc.record(
  Object.fromEntries(
    KNOWN_VARIABLES.map((name) => [name, fc.string({ unit: chars('{}|ab '), maxLength: 5 })]),
  ) as Record<TemplateVariable, fc.Arbitrary<string>>,
);
const plainValues = fc.record(
  Object.fromEntries(
    KNOWN_VARIABLES.map((name) => [name, fc.string({ unit: chars('ab Z.'), maxLength: 5 })]),
  ) as Record<TemplateVariable, fc.Arbitrary<string>>,
);
const seed = fc.integer({ min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER });

function serializePart(part: ModelPart): string {
  return part.kind === 'text' ? part.text : `{${part.name}}`;
}

function serialize(nodes: readonly ModelNode[]): string {
  return nodes
    .map((n) => {
      if (n.kind === 'escape') return n.brace + n.brace;
      if (n.kind === 'spintax') return `{${n.options.map((o) => o.map(serializePart).join('')).join('|')}}`;
      return serializePart(n);
    })
    .join('');
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A regular expression matching exactly the renderings the model allows. */
function possibleOutputs(nodes: readonly ModelNode[], values: VariableValues): RegExp {
  const part = (p: ModelPart) => escapeRegExp(p.kind === 'text' ? p.text : (values[p.name] ?? ''));
  const source = nodes
    .map((n) => {
      if (n.kind === 'escape') return escapeRegExp(n.brace);
      if (n.kind === 'spintax') return `(?:${n.options.map((o) => o.map(part).join('')).join('|')})`;
      return part(n);
    })
    .join('');
  return new RegExp(`^${source}$`, 'u');
}

function modelVariables(nodes: readonly ModelNode[]): TemplateVariable[] {
  const names = new Set<TemplateVariable>();
  for (const n of nodes) {
    if (n.kind === 'variable') names.add(n.name);
    if (n.kind === 'spintax')
      for (const o of n.options) for (const p of o) if (p.kind === 'variable') names.add(p.name);
  }
  return [...names].sort();
}

const count = (text: string, char: string) => text.split(char).length - 1;

describe('properties', () => {
  it('a generated valid template analyzes clean and renders to one of the renderings it allows', () => {
    fc.assert(
      fc.property(template, anyValues, seed, (nodes, values, s) => {
        const text = serialize(nodes);
        expect(analyzeText(text)).toEqual({ variables: modelVariables(nodes), problems: [] });
        expect(renderText(text, values, s)).toMatch(possibleOutputs(nodes, values));
      }),
    );
  });

  it('leaves no markup brace behind: only braces from escapes or from values', () => {
    fc.assert(
      fc.property(template, plainValues, seed, (nodes, values, s) => {
        const out = renderText(serialize(nodes), values, s);
        const escapes = (brace: string) => nodes.filter((n) => n.kind === 'escape' && n.brace === brace).length;
        expect(count(out, '{')).toBe(escapes('{'));
        expect(count(out, '}')).toBe(escapes('}'));
        if (escapes('{') + escapes('}') === 0) expect(out).not.toMatch(/[{}]/);
      }),
    );
  });

  it('the same seed gives the same output', () => {
    fc.assert(
      fc.property(template, plainValues, seed, (nodes, values, s) => {
        const text = serialize(nodes);
        expect(renderText(text, values, s)).toBe(renderText(text, values, s));
        const message = { subject: text, body: text };
        expect(renderMessage(message, values, s)).toEqual(renderMessage(message, values, s));
      }),
    );
  });

  it('every spintax output is one of its options', () => {
    const plainOption = fc.string({ unit: chars('ab xy,.!\n<>&é'), maxLength: 6 });
    fc.assert(
      fc.property(fc.array(plainOption, { minLength: 2, maxLength: 6 }), seed, (options, s) => {
        expect(options).toContain(renderText(`{${options.join('|')}}`, {}, s));
        expect(options.map((o) => `<${o}>`)).toContain(renderText(`<{${options.join('|')}}>`, {}, s));
      }),
    );
  });

  it('bodyToHtml never lets a raw "<" (or > " \') through and loses no visible character', () => {
    const body = fc.oneof(fc.string({ unit: 'binary' }), fc.string({ unit: chars('<>&"\'ab \n\r\t') }));
    fc.assert(
      fc.property(body, (text) => {
        const html = bodyToHtml(text);
        const withoutTags = html.replace(/<\/?p>|<br>/g, '');
        expect(withoutTags).not.toMatch(/[<>"']/);
        expect(withoutTags.replace(/&(?!(?:amp|lt|gt|quot|#39);)/g, '')).toBe(withoutTags);
        const decoded = withoutTags
          .replace(/&lt;/g, '<')
          .replace(/&gt;/g, '>')
          .replace(/&quot;/g, '"')
          .replace(/&#39;/g, "'")
          .replace(/&amp;/g, '&');
        expect(decoded.replace(/\s/g, '')).toBe(text.replace(/\s/g, ''));
      }),
    );
  });

  it('analyzeText never throws; problems are ordered, located correctly, and renderText throws exactly when there are some', () => {
    const messy = fc.string({ unit: chars('{}|ab_\n\r '), maxLength: 30 });
    fc.assert(
      fc.property(messy, (text) => {
        const { problems, variables } = analyzeText(text);
        expect(problems.length).toBeLessThanOrEqual(MAX_PROBLEMS);
        for (let k = 1; k < problems.length; k += 1)
          expect(problems[k].offset).toBeGreaterThanOrEqual(problems[k - 1].offset);
        for (const problem of problems) {
          const before = text.slice(0, problem.offset).split(/\r\n|\r|\n/);
          expect(problem.line).toBe(before.length);
          expect(problem.column).toBe(before[before.length - 1].length + 1);
          expect(problem.message).toContain(` at line ${problem.line}, column ${problem.column}`);
        }
        const { values } = fillWithSamples(variables, {});
        if (problems.length > 0) expect(() => renderText(text, SAMPLE_VALUES, 0)).toThrow(TemplateSyntaxError);
        else expect(typeof renderText(text, values, 0)).toBe('string');
      }),
    );
  });
});

/** Renderings of `{Hi|Hello|Hey} {a|b|c|d}{1|2|3}` for seeds 0, 1, 2, -1, 123456789. */
const PINNED = ['Hey b2', 'Hello d1', 'Hi b2', 'Hello d1', 'Hello b1'];
