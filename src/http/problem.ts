import { STATUS_CODES } from 'node:http';
import { Type } from '@sinclair/typebox';
import { CONNECTION_PROBLEMS } from '../mail/errors.js';
import type { ConnectionFailure, FieldError } from './errors.js';

export const ProblemSchema = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    code: Type.String(),
    detail: Type.String(),
    instance: Type.Optional(Type.String()),
    errors: Type.Optional(Type.Array(Type.Object({ path: Type.String(), message: Type.String() }))),
    failures: Type.Optional(
      Type.Array(
        Type.Object({
          side: Type.Union([Type.Literal('imap'), Type.Literal('smtp')]),
          problem: Type.Union(
            CONNECTION_PROBLEMS.map((problem) => Type.Literal(problem)),
            {
              description:
                "wrong_password, reconnect_required, app_password_required, tls_mode_mismatch (SSL/TLS on a STARTTLS port or the reverse), untrusted_certificate, host_unreachable (the uniform answer for hosts on the operator's network), no_such_host, connection_refused, no_answer, not_mail_server (public hosts: what happened), timeout (a mail server that greeted, then stalled), server_refused",
            },
          ),
          title: Type.String({ description: 'a headline, e.g. "Wrong password or user name"' }),
          fix: Type.String({ description: 'one sentence: what to change' }),
        }),
        {
          description: '`connection_failed` only: each server whose login check failed, with the problem and its fix',
        },
      ),
    ),
  },
  { $id: 'Problem', description: 'RFC 9457 problem details' },
);

export function problemBody(
  status: number,
  code: string,
  detail: string,
  errors?: FieldError[],
  failures?: ConnectionFailure[],
) {
  return {
    type: 'about:blank',
    title: STATUS_CODES[status] ?? 'Error',
    status,
    code,
    detail,
    ...(errors && errors.length > 0 ? { errors } : {}),
    ...(failures && failures.length > 0 ? { failures } : {}),
  };
}
