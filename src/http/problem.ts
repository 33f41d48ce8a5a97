import { STATUS_CODES } from 'node:http';
import { Type } from '@sinclair/typebox';
import type { FieldError } from './errors.js';

export const ProblemSchema = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    code: Type.String(),
    detail: Type.String(),
    instance: Type.Optional(Type.String()),
    errors: Type.Optional(Type.Array(Type.Object({ path: Type.String(), message: Type.String() }))),
  },
  { $id: 'Problem', description: 'RFC 9457 problem details' },
);

export function problemBody(status: number, code: string, detail: string, errors?: FieldError[]) {
  return {
    type: 'about:blank',
    title: STATUS_CODES[status] ?? 'Error',
    status,
    code,
    detail,
    ...(errors && errors.length > 0 ? { errors } : {}),
  };
}
