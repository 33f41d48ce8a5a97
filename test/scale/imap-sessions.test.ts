// The scale-out tests judge "never two sessions of a mailbox at once" from Dovecot's log: the pairing
// of logins and closing lines must hold for every line Dovecot really writes.
import { describe, expect, it } from 'vitest';
import { overlappingSessions, parseImapSessions } from './cluster.js';

const s10 = { email: 's10@scale-five.test', password: 'x' };
const login = (at: string, pid: number, session: string) =>
  `2026-11-27 ${at} imap-login: Info: Login: user=<s10@scale-five.test>, method=PLAIN, rip=127.0.0.1, lip=127.0.0.1, mpid=${pid}, TLS, session=<${session}>`;
const stats = (session: string) =>
  `in=31 out=626 deleted=0 expunged=0 trashed=0 hdr_count=0 hdr_bytes=0 body_count=0 body_bytes=0 user=<s10@scale-five.test> session=<${session}>`;

describe('IMAP sessions read from Dovecot’s log', () => {
  it('pairs a closing line whose imap(user)<pid><session> prefix Dovecot dropped', () => {
    const lines = [
      login('12:47:16', 440, 'dAXCdUFhNst/AAAB'),
      // written this way when the imap process exits at once (seen under load)
      `2026-11-27 12:47:16 imap: Info: Disconnected: Logged out ${stats('dAXCdUFhNst/AAAB')}`,
      login('12:47:27', 593, 'FLhfdkFhmJR/AAAB'),
      `2026-11-27 12:47:27 imap(s10@scale-five.test)<593><FLhfdkFhmJR/AAAB>: Info: Disconnected: Connection closed (UID FETCH finished 0.001 secs ago) ${stats('FLhfdkFhmJR/AAAB')}`,
    ];
    const sessions = parseImapSessions(lines, [s10]);
    expect(sessions.map((x) => [x.session, x.loginLine, x.logoutLine])).toEqual([
      ['dAXCdUFhNst/AAAB', 0, 1],
      ['FLhfdkFhmJR/AAAB', 2, 3],
    ]);
    expect(overlappingSessions(sessions)).toEqual([]);
  });

  it('closes a session only on an imap process’s closing line that names it', () => {
    const lines = [
      login('12:47:16', 440, 'dAXCdUFhNst/AAAB'),
      // a login process's disconnect is never a logged-in session's end
      '2026-11-27 12:47:16 imap-login: Info: Disconnected: Connection closed (no auth attempts in 0 secs): user=<>, rip=127.0.0.1, lip=127.0.0.1, TLS, session=<dAXCdUFhNst/AAAB>',
      // nor is a closing line without the session at its end
      '2026-11-27 12:47:17 imap: Info: Disconnected: Logged out in=31 out=626',
      login('12:47:27', 593, 'FLhfdkFhmJR/AAAB'),
    ];
    const sessions = parseImapSessions(lines, [s10]);
    expect(sessions.map((x) => x.logoutLine)).toEqual([null, null]);
    expect(overlappingSessions(sessions)).toHaveLength(1);
  });
});
