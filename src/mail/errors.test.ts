import { describe, expect, it } from 'vitest';
import { classifyMailFailure, MailConnectionError, smtpReplyCode, type MailConnectionErrorInit } from './errors.js';

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
