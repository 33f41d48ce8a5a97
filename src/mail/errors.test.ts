import { describe, expect, it } from 'vitest';
import {
  classifyMailFailure,
  diagnoseMailFailure,
  MailConnectionError,
  smtpReplyCode,
  tlsFailureOf,
  type MailConnectionErrorInit,
} from './errors.js';

function failure(init: Partial<MailConnectionErrorInit> & Pick<MailConnectionErrorInit, 'kind'>): MailConnectionError {
  return new MailConnectionError({ side: 'smtp', message: 'failed', host: 'mail.example.org', port: 587, ...init });
}

describe('classifyMailFailure', () => {
  it.each([
    ['a timeout', failure({ kind: 'timeout', code: 'ETIMEDOUT' })],
    ['a refused connection', failure({ kind: 'connection', code: 'ECONNREFUSED' })],
    ['a reset connection', failure({ kind: 'connection', code: 'ECONNRESET' })],
    ['a DNS hiccup', failure({ kind: 'connection', code: 'EAI_AGAIN' })],
    ['a connection closed by the server', failure({ kind: 'connection', code: 'EConnectionClosed', side: 'imap' })],
    [
      '454 Temporary authentication failure',
      failure({ kind: 'auth', code: 'EAUTH', serverResponse: '454 4.7.0 Temporary authentication failure' }),
    ],
    ['421 service not available', failure({ kind: 'protocol', serverResponse: '421 4.3.2 Service shutting down' })],
    [
      '450 mailbox busy',
      failure({ kind: 'rejected', permanent: false, serverResponse: '450 4.2.1 Mailbox busy, try later' }),
    ],
    ['451 local error', failure({ kind: 'protocol', serverResponse: '451 4.3.0 Error: queue file write error' })],
    [
      'IMAP [UNAVAILABLE]',
      failure({
        kind: 'auth',
        side: 'imap',
        serverResponse: 'NO [UNAVAILABLE] Temporary authentication failure. [host:2026-11-26]',
      }),
    ],
    ['IMAP [INUSE]', failure({ kind: 'auth', side: 'imap', serverResponse: 'NO [INUSE] Mailbox is locked' })],
  ])('%s is transient', (_name, err) => {
    expect(classifyMailFailure(err)).toBe('transient');
  });

  it.each([
    [
      '535 authentication failed',
      failure({ kind: 'auth', code: 'EAUTH', serverResponse: '535 5.7.8 Error: authentication failed' }),
    ],
    [
      'IMAP [AUTHENTICATIONFAILED]',
      failure({ kind: 'auth', side: 'imap', serverResponse: 'NO [AUTHENTICATIONFAILED] Authentication failed.' }),
    ],
    [
      'an IMAP login refused without a code',
      failure({ kind: 'auth', side: 'imap', serverResponse: 'NO LOGIN failed.' }),
    ],
    ['a 5xx policy rejection', failure({ kind: 'protocol', serverResponse: '554 5.7.1 Sending not allowed' })],
    [
      'a recipient refused for good',
      failure({ kind: 'rejected', permanent: true, serverResponse: '550 5.1.1 No such user' }),
    ],
    ['a host name that does not exist', failure({ kind: 'connection', code: 'ENOTFOUND' })],
    ['a host the operator does not allow', failure({ kind: 'connection', code: 'EREFUSEDHOST' })],
    ['a certificate that does not match', failure({ kind: 'connection', code: 'ERR_TLS_CERT_ALTNAME_INVALID' })],
  ])('%s is permanent', (_name, err) => {
    expect(classifyMailFailure(err)).toBe('permanent');
  });
});

describe('smtpReplyCode', () => {
  it('reads the reply code at the start of an answer, nothing else', () => {
    expect(smtpReplyCode('454 4.7.0 Temporary authentication failure')).toBe(454);
    expect(smtpReplyCode('250-PIPELINING')).toBe(250);
    expect(smtpReplyCode('NO [UNAVAILABLE] 454')).toBeUndefined();
    expect(smtpReplyCode(undefined)).toBeUndefined();
  });
});

describe('diagnoseMailFailure', () => {
  it.each([
    ['a refused login', failure({ kind: 'auth', serverResponse: '535 5.7.8 authentication failed' }), 'wrong_password'],
    [
      "Gmail's 534 5.7.9 app password answer",
      failure({
        kind: 'auth',
        serverResponse: '534-5.7.9 Application-specific password required. Learn more at https://support.google.com',
      }),
      'app_password_required',
    ],
    [
      'implicit TLS answered in plain text',
      failure({ kind: 'connection', tlsFailure: 'not_tls', secure: true, port: 2587 }),
      'tls_mode_mismatch',
    ],
    ['SSL/TLS chosen for port 587', failure({ kind: 'connection', secure: true, port: 587 }), 'tls_mode_mismatch'],
    ['STARTTLS chosen for port 993', failure({ kind: 'connection', secure: false, port: 993 }), 'tls_mode_mismatch'],
    [
      'a self-signed certificate',
      failure({ kind: 'connection', tlsFailure: 'untrusted_certificate', secure: true, port: 465 }),
      'untrusted_certificate',
    ],
  ] as const)('%s', (_name, err, problem) => {
    expect(diagnoseMailFailure(err).problem).toBe(problem);
  });

  it('tells a mailbox that signs in with OAuth to reconnect, never to check a password', () => {
    for (const serverResponse of ['535 5.7.8 authentication failed', '454 4.7.0 Temporary authentication failure']) {
      const diagnosis = diagnoseMailFailure(failure({ kind: 'auth', serverResponse }), { oauth: true });
      expect(diagnosis.problem).toBe('reconnect_required');
      expect(diagnosis.fix).toMatch(/reconnect/i);
      expect(`${diagnosis.title} ${diagnosis.fix}`).not.toMatch(/password/i);
    }
  });

  it('a closed port is host_unreachable, never the password', () => {
    const diagnosis = diagnoseMailFailure(
      failure({ kind: 'connection', code: 'ECONNREFUSED', secure: false, port: 2525 }),
    );
    expect(diagnosis).toMatchObject({ side: 'smtp', problem: 'host_unreachable', title: 'SMTP server not reachable' });
  });

  it('a timeout after the greeting is timeout; a 4xx refusal is temporary, not the password', () => {
    expect(diagnoseMailFailure(failure({ kind: 'timeout', code: 'ETIMEDOUT' })).problem).toBe('timeout');
    const busy = diagnoseMailFailure(
      failure({ kind: 'auth', serverResponse: '454 4.7.0 Temporary authentication failure' }),
    );
    expect(busy).toMatchObject({ problem: 'server_refused', title: 'SMTP server temporarily unavailable' });
  });

  it('a refused login of a provider that wants app passwords says to use one', () => {
    const diagnosis = diagnoseMailFailure(failure({ kind: 'auth', serverResponse: '535 5.7.8 bad credentials' }), {
      appPasswordProvider: true,
    });
    expect(diagnosis.fix).toMatch(/use an app password/);
  });
});

describe('tlsFailureOf', () => {
  it('reads the OpenSSL code or text without showing it', () => {
    expect(tlsFailureOf({ code: 'ERR_SSL_WRONG_VERSION_NUMBER', message: 'x' })).toBe('not_tls');
    expect(
      tlsFailureOf({ code: 'ESOCKET', message: '0A00010B:SSL routines:ssl3_get_record:wrong version number' }),
    ).toBe('not_tls');
    expect(tlsFailureOf({ code: 'DEPTH_ZERO_SELF_SIGNED_CERT', message: 'self-signed certificate' })).toBe(
      'untrusted_certificate',
    );
    expect(tlsFailureOf({ code: 'ESOCKET', message: 'self-signed certificate' })).toBe('untrusted_certificate');
    expect(tlsFailureOf({ code: 'ECONNREFUSED', message: 'connect ECONNREFUSED 127.0.0.1:25' })).toBeUndefined();
  });
});
