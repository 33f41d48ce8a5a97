// POST /api/templates/:id/preview and /api/templates/preview: a template rendered with sample or given values.
import { beforeAll, describe, expect, it } from 'vitest';
import { KNOWN_VARIABLES, SAMPLE_VALUES } from './render.js';
import { expectProblem } from '../../test/helpers/problem.js';
import type { TemplateJson } from '../../test/helpers/templates-api.js';
import { countTemplates, create, messageAt, useTemplatesApp, ws } from '../../test/helpers/templates-api.js';

useTemplatesApp();

describe('POST /api/templates/:id/preview', () => {
  let template: TemplateJson;

  beforeAll(async () => {
    template = await create(ws, {
      subject: '{Quick|Short} question about {topic}',
      body: '{Hi|Hello|Hey} {recipient_first_name},\n\nwhat does <b>{company}</b> think?\n\n{Best|Cheers},\n{sender_name}',
    });
  });

  it('fills every variable from samples when none are given', async () => {
    const res = await ws.request({ method: 'POST', url: `/api/templates/${template.id}/preview` });
    expect(res.statusCode, res.body).toBe(200);
    const { preview } = res.json<{ preview: { subject: string; body: string; html: string; usedSamples: string[] } }>();
    expect(Object.keys(preview).sort()).toEqual(['body', 'html', 'subject', 'usedSamples']);
    expect(preview.usedSamples).toEqual(['company', 'recipient_first_name', 'sender_name', 'topic']);
    expect(preview.subject).toMatch(new RegExp(`^(Quick|Short) question about ${SAMPLE_VALUES.topic}$`));
    expect(preview.body).toContain(SAMPLE_VALUES.recipient_first_name);
    expect(preview.body).not.toMatch(/[{}]/);
  });

  it('uses the values given and lists only the rest as samples', async () => {
    const res = await ws.request({
      method: 'POST',
      url: `/api/templates/${template.id}/preview`,
      payload: { variables: { recipient_first_name: 'Maria', company: 'Acme & Sons', date: 'unused' }, seed: 7 },
    });
    const { preview } = res.json();
    expect(preview.usedSamples).toEqual(['sender_name', 'topic']);
    expect(preview.body).toMatch(/^(Hi|Hello|Hey) Maria,\n\nwhat does <b>Acme & Sons<\/b> think\?/);
    expect(preview.html).toContain('&lt;b&gt;Acme &amp; Sons&lt;/b&gt;');
    expect(preview.html.startsWith('<p>')).toBe(true);
    expect(preview.html).not.toContain('<b>');
  });

  it('picks the same spintax options for the same seed, and varies with the seed', async () => {
    const render = async (seed?: number) =>
      (
        await ws.request({
          method: 'POST',
          url: `/api/templates/${template.id}/preview`,
          payload: seed === undefined ? {} : { seed },
        })
      ).json().preview;
    expect(await render(12345)).toEqual(await render(12345));
    expect(await render()).toEqual(await render());
    const seen = new Set<string>();
    for (const seed of [0, 1, 2, 3, 4, 5, 6, 7, -1, 2 ** 40, Number.MAX_SAFE_INTEGER])
      seen.add(JSON.stringify(await render(seed)));
    expect(seen.size).toBeGreaterThan(1);
  });

  const invalid: [string, unknown, string][] = [
    ['an unknown variable name', { variables: { first_name: 'Maria' } }, '/body/variables/first_name'],
    ['a value over 1000 characters', { variables: { topic: 't'.repeat(1001) } }, '/body/variables/topic'],
    ['a value that is not a string', { variables: { topic: 5 } }, '/body/variables/topic'],
    ['variables that are not an object', { variables: ['topic'] }, '/body/variables'],
    ['a fractional seed', { seed: 1.5 }, '/body/seed'],
    ['a seed given as a string', { seed: '1' }, '/body/seed'],
    ['a seed beyond the safe integers', { seed: 2 ** 60 }, '/body/seed'],
    ['an unknown field', { subject: 'x' }, '/body/subject'],
  ];

  it.each(invalid)('answers 400 for %s', async (_label, payload, path) => {
    const res = await ws.request({
      method: 'POST',
      url: `/api/templates/${template.id}/preview`,
      payload: payload as object,
    });
    expectProblem(res, 400, 'validation_error', path);
  });

  it('lists the known variables when a variable name is unknown', async () => {
    const res = await ws.request({
      method: 'POST',
      url: `/api/templates/${template.id}/preview`,
      payload: { variables: { first_name: 'x' } },
    });
    expect(messageAt(res, '/body/variables/first_name')).toContain(KNOWN_VARIABLES.join(', '));
  });

  it('accepts a value of exactly 1000 characters', async () => {
    const res = await ws.request({
      method: 'POST',
      url: `/api/templates/${template.id}/preview`,
      payload: { variables: { topic: 't'.repeat(1000) } },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().preview.subject).toContain('t'.repeat(1000));
  });

  it('answers 404 for a missing id', async () => {
    expectProblem(
      await ws.request({ method: 'POST', url: '/api/templates/tpl_doesnotexist/preview' }),
      404,
      'not_found',
    );
  });
});

describe('POST /api/templates/preview', () => {
  it('renders text that is not saved', async () => {
    const before = await countTemplates(ws.id);
    const res = await ws.request({
      method: 'POST',
      url: '/api/templates/preview',
      payload: {
        subject: 'Hi {recipient_first_name}',
        body: 'Line one\nLine two\n\n{{literal}}',
        variables: { recipient_first_name: 'Sam' },
      },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      preview: {
        subject: 'Hi Sam',
        body: 'Line one\nLine two\n\n{literal}',
        html: '<p>Line one<br>Line two</p>\n<p>{literal}</p>',
        usedSamples: [],
      },
    });
    expect(await countTemplates(ws.id)).toBe(before);
  });

  it('is the same render as a saved template with the same text and seed', async () => {
    const saved = await create(ws, { subject: '{A|B|C|D} {topic}', body: '{1|2|3|4|5} {sender_name}' });
    const payload = { variables: { topic: 'x' }, seed: 99 };
    const fromSaved = await ws.request({ method: 'POST', url: `/api/templates/${saved.id}/preview`, payload });
    const unsaved = await ws.request({
      method: 'POST',
      url: '/api/templates/preview',
      payload: { subject: saved.subject, body: saved.body, ...payload },
    });
    expect(unsaved.json()).toEqual(fromSaved.json());
    expect(unsaved.json().preview.usedSamples).toEqual(['sender_name']);
  });

  const invalid: [string, Record<string, unknown>, string][] = [
    ['a missing subject', { body: 'x' }, '/body/subject'],
    ['a missing body', { subject: 'x' }, '/body/body'],
    ['an unknown variable in the body', { subject: 'x', body: '{foo}' }, '/body/body'],
    ['unbalanced braces in the subject', { subject: 'x}', body: 'y' }, '/body/subject'],
    ['a 301-character subject', { subject: 's'.repeat(301), body: 'y' }, '/body/subject'],
    ['an unknown variable value', { subject: 'x', body: 'y', variables: { nope: 'z' } }, '/body/variables/nope'],
    ['a fractional seed', { subject: 'x', body: 'y', seed: 0.5 }, '/body/seed'],
    ['an unknown field', { subject: 'x', body: 'y', name: 'z' }, '/body/name'],
  ];

  it.each(invalid)('answers 400 for %s', async (_label, payload, path) => {
    const res = await ws.request({ method: 'POST', url: '/api/templates/preview', payload });
    expectProblem(res, 400, 'validation_error', path);
  });
});
