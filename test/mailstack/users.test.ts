import { describe, expect, it } from 'vitest';
import {
  ALL_MAIL_USERS,
  DISCARD_RECIPIENTS,
  JUNK_RECIPIENTS,
  JUNK_SENDERS,
  MAIL_USERS,
  type MailUserSuite,
} from './users.js';

const domains = (suite: MailUserSuite): Set<string> => new Set(MAIL_USERS[suite].map((u) => u.email.split('@')[1]));

describe('mail stack users', () => {
  it('no mailbox belongs to two suites', () => {
    const emails = ALL_MAIL_USERS.map((u) => u.email);
    expect(new Set(emails).size).toBe(emails.length);
  });

  it('every address is lower case user@domain.test and has a usable password', () => {
    for (const u of ALL_MAIL_USERS) {
      expect(u.email).toMatch(/^[a-z0-9._-]+@[a-z0-9-]+\.test$/);
      expect(u.password).toMatch(/^[^\s:"\\]{8,}$/);
    }
  });

  it('each suite has the shape its tests rely on', () => {
    expect(MAIL_USERS.mailboxes).toHaveLength(6);
    expect(domains('mailboxes').size).toBe(3);
    expect(MAIL_USERS.engine).toHaveLength(6);
    expect(domains('engine').size).toBeGreaterThanOrEqual(4);
    expect(MAIL_USERS.engineSim).toHaveLength(12);
    expect(domains('engineSim').size).toBe(4);
    expect(MAIL_USERS.scale).toHaveLength(10);
    expect(domains('scale').size).toBe(5);
    expect(MAIL_USERS.dashboard).toHaveLength(3);
    expect(MAIL_USERS.bench).toHaveLength(8);
    expect(domains('bench').size).toBe(4);
    expect(MAIL_USERS.benchWide).toHaveLength(24);
    expect(domains('benchWide').size).toBe(6);
  });

  it('junk senders are stack users; the engine has one, the benchmarks none', () => {
    const emails = new Set(ALL_MAIL_USERS.map((u) => u.email));
    for (const j of JUNK_SENDERS) expect(emails.has(j)).toBe(true);
    expect(MAIL_USERS.engine.filter((u) => JUNK_SENDERS.includes(u.email))).toHaveLength(1);
    expect(MAIL_USERS.bench.filter((u) => JUNK_SENDERS.includes(u.email))).toHaveLength(0);
    expect(MAIL_USERS.benchWide.filter((u) => JUNK_SENDERS.includes(u.email))).toHaveLength(0);
    expect(MAIL_USERS.engineSim.filter((u) => JUNK_SENDERS.includes(u.email))).toHaveLength(0);
  });

  it('the hostile receivers belong to the hostile-tenant suites only (the placement suite its missing seed, the culprit suite its junk-everything receiver)', () => {
    const hostile = new Set<string>(
      [...MAIL_USERS.hostile, ...MAIL_USERS.sybil, ...MAIL_USERS.placement, ...MAIL_USERS.culprit].map((u) => u.email),
    );
    for (const address of [...JUNK_RECIPIENTS, ...DISCARD_RECIPIENTS]) expect(hostile.has(address)).toBe(true);
    expect(domains('hostile').size).toBe(MAIL_USERS.hostile.length);
  });
});
