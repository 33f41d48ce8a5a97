// The templates API tests' fixtures: one test app per test file (started by useTemplatesApp), a
// template's fields, and shortcuts to create, list and count templates over the API.
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, expect } from 'vitest';
import { fixedClock } from '../../src/clock.js';
import { createTestApp, type TestApp, type TestWorkspace } from './test-app.js';
import type { Template, TemplateFields } from '../../src/templates/templates.schemas.js';
export const START = '2026-11-25T14:03:00.000Z';
export const clock = fixedClock(START);
export let t: TestApp;
export let ws: TestWorkspace;

export type Fields = TemplateFields;
export type TemplateJson = Template;

export function fields(over: Partial<Fields> = {}): Fields {
  return {
    name: 'Quick question',
    type: 'initial',
    language: 'en',
    subject: 'About {topic}',
    body: '{Hi|Hello} {recipient_first_name},\n\ndo you have a minute this week?\n\nThanks,\n{sender_name}',
    ...over,
  };
}

export function messageAt(res: LightMyRequestResponse, path: string): string {
  const error = res.json<{ errors: { path: string; message: string }[] }>().errors.find((e) => e.path === path);
  expect(error, `no error at ${path}: ${res.body}`).toBeDefined();
  return error!.message;
}

export async function create(workspace: TestWorkspace, over: Partial<Fields> = {}): Promise<TemplateJson> {
  const res = await workspace.request({ method: 'POST', url: '/api/templates', payload: fields(over) });
  expect(res.statusCode, res.body).toBe(201);
  return res.json<{ template: TemplateJson }>().template;
}

/** A workspace without its default templates, so counts and order are exactly what the test made. */
export async function emptyWorkspace(name: string): Promise<TestWorkspace> {
  const workspace = await t.createWorkspace(name);
  await t.database.db.deleteFrom('templates').where('workspace_id', '=', workspace.id).execute();
  return workspace;
}

export async function list(workspace: TestWorkspace, query = '') {
  const res = await workspace.request({ method: 'GET', url: `/api/templates${query}` });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{
    templates: TemplateJson[];
    pagination: { page: number; limit: number; total: number; totalPages: number };
  }>();
}

export async function countTemplates(workspaceId: string): Promise<number> {
  const rows = await t.database.db
    .selectFrom('templates')
    .select('id')
    .where('workspace_id', '=', workspaceId)
    .execute();
  return rows.length;
}

/** Starts the test app before this file's tests and closes it after them. */
export function useTemplatesApp(): void {
  beforeAll(async () => {
    t = await createTestApp({ clock });
    ws = t.workspace;
  });

  afterAll(async () => {
    await t.close();
  });
}
