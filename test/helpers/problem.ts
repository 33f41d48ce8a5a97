import type { Static } from '@sinclair/typebox';
import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import type { ProblemSchema } from '../../src/http/problem.js';

export type Problem = Static<typeof ProblemSchema>;

/**
 * Asserts an RFC 9457 problem+json answer with this status and code (and, when `path` is given, a
 * field error at that path) and returns it. The raw body rides along in every message, so a
 * failure shows what the server said.
 */
export function expectProblem(res: LightMyRequestResponse, status: number, code: string, path?: string): Problem {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers['content-type'], res.body).toMatch(/^application\/problem\+json/);
  const problem = res.json<Problem>();
  expect(problem, res.body).toMatchObject({ type: 'about:blank', status, code });
  expect(typeof problem.title, res.body).toBe('string');
  expect(typeof problem.detail, res.body).toBe('string');
  // A problem never carries a stack trace.
  expect(res.body).not.toMatch(/\bat .*\.(ts|js):\d+/);
  if (path !== undefined)
    expect(
      problem.errors?.map((e) => e.path),
      res.body,
    ).toContain(path);
  return problem;
}
