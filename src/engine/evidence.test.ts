import { describe, expect, it } from 'vitest';
import {
  boundedScore,
  CORROBORATING_PARTIES,
  ESTABLISHED_AFTER_DAYS,
  FOREIGN_EVIDENCE_BOUND,
  isEstablished,
  partiesOf,
  serverNetwork,
  weighEvidence,
  type ReceiverEvidence,
} from './evidence.js';
import { reputationScore } from './reputation.js';

const OWN = 'ws_own';

/**
 * One receiver's view of the sender's mail. By default its workspace is a party of its own and it
 * lives on a mail server of its own, named after its domain, and it is established.
 */
function at(workspaceId: string, server: string, counts: Partial<ReceiverEvidence> = {}): ReceiverEvidence {
  const sent = counts.sent ?? 10;
  return {
    workspaceId,
    party: workspaceId,
    server,
    established: true,
    sent,
    found: sent,
    spam: 0,
    bounced: 0,
    lost: 0,
    ...counts,
  };
}

/** Ten messages to the own workspace, all in the inbox: a healthy sender as its owner sees it. */
const healthyAtHome = at(OWN, 'home.test', { sent: 10 });

describe('weighEvidence', () => {
  it('counts the own workspace in full, bad news included', () => {
    const home = at(OWN, 'home.test', { sent: 20, found: 18, spam: 9, lost: 2 });
    const weighed = weighEvidence(OWN, [home]);
    expect(weighed.trusted).toEqual({ sent: 20, found: 18, spam: 9, bounced: 0, lost: 2 });
    expect(weighed.trusted).toEqual(weighed.all);
  });

  it('sets aside what one foreign workspace alone reports: its spam, lost and bounced messages', () => {
    const hostile = [
      at('ws_hostile', 'junk.test', { sent: 10, found: 10, spam: 10 }),
      at('ws_hostile', 'void.test', { sent: 10, found: 0, lost: 10 }),
      at('ws_hostile', 'refuse.test', { sent: 10, found: 0, bounced: 10 }),
    ];
    const weighed = weighEvidence(OWN, [healthyAtHome, ...hostile]);
    expect(weighed.all).toEqual({ sent: 40, found: 20, spam: 10, bounced: 10, lost: 10 });
    expect(weighed.trusted).toEqual({ sent: 10, found: 10, spam: 0, bounced: 0, lost: 0 });
    expect(weighed.corroborated).toEqual([]);
  });

  it('keeps what a foreign workspace found in the inbox', () => {
    const weighed = weighEvidence(OWN, [at('ws_other', 'other.test', { sent: 10, found: 10, spam: 1 })]);
    // 1 in 10 is under the reporting rate, and anyway uncorroborated: the inbox mail counts, the spam does not
    expect(weighed.trusted).toEqual({ sent: 9, found: 9, spam: 0, bounced: 0, lost: 0 });
  });

  it(`counts a problem that ${CORROBORATING_PARTIES} parties on as many mail servers agree on`, () => {
    const reports = [
      at('ws_a', 'a.test', { sent: 10, found: 10, spam: 5 }),
      at('ws_b', 'b.test', { sent: 10, found: 10, spam: 4 }),
      at('ws_c', 'c.test', { sent: 10, found: 10, spam: 3 }),
    ];
    const weighed = weighEvidence(OWN, [healthyAtHome, ...reports]);
    expect(weighed.corroborated).toEqual(['spam']);
    expect(weighed.trusted).toEqual(weighed.all);
    expect(weighed.trusted.spam).toBe(12);
  });

  it('needs as many parties as that: two agreeing are not enough', () => {
    const reports = [
      at('ws_a', 'a.test', { sent: 10, found: 0, lost: 10 }),
      at('ws_b', 'b.test', { sent: 10, found: 0, lost: 10 }),
    ];
    expect(weighEvidence(OWN, reports).corroborated).toEqual([]);
  });

  it('needs independent servers: three parties whose receivers share one mail server are one voice', () => {
    const reports = ['ws_a', 'ws_b', 'ws_c'].map((ws) => at(ws, 'same.test', { sent: 10, found: 10, spam: 10 }));
    const weighed = weighEvidence(OWN, [healthyAtHome, ...reports]);
    expect(weighed.corroborated).toEqual([]);
    expect(weighed.trusted).toEqual({ sent: 10, found: 10, spam: 0, bounced: 0, lost: 0 });
  });

  it('a party that sees the problem only now and then does not count as reporting it', () => {
    const reports = [
      at('ws_a', 'a.test', { sent: 10, found: 10, spam: 10 }),
      at('ws_b', 'b.test', { sent: 10, found: 10, spam: 10 }),
      // 1 in 20 is under the 20% reporting rate for spam
      at('ws_c', 'c.test', { sent: 20, found: 20, spam: 1 }),
    ];
    expect(weighEvidence(OWN, reports).corroborated).toEqual([]);
  });

  it('weighs each problem on its own', () => {
    const reports = [
      at('ws_a', 'a.test', { sent: 10, found: 9, spam: 3, lost: 1 }),
      at('ws_b', 'b.test', { sent: 10, found: 9, spam: 3, lost: 1 }),
      at('ws_c', 'c.test', { sent: 10, found: 10, spam: 3 }),
    ];
    const weighed = weighEvidence(OWN, reports);
    expect(weighed.corroborated).toEqual(['spam']);
    // two lost messages reported by two parties only: set aside
    expect(weighed.trusted).toEqual({ sent: 28, found: 28, spam: 9, bounced: 0, lost: 0 });
  });

  it('hears one person in three workspaces on three servers as one voice', () => {
    const sybil = ['ws_1', 'ws_2', 'ws_3'].map((ws, i) =>
      at(ws, `10.${i}.0.0/24`, { party: 'person_mallory', sent: 10, found: 10, spam: 10 }),
    );
    const weighed = weighEvidence(OWN, [healthyAtHome, ...sybil]);
    expect(weighed.corroborated).toEqual([]);
    expect(weighed.trusted).toEqual({ sent: 10, found: 10, spam: 0, bounced: 0, lost: 0 });
  });

  it('pairs reports off: one party on three servers and two more on one of them are two voices', () => {
    const reports = [
      at('ws_a', 's1', { sent: 10, found: 10, spam: 10 }),
      at('ws_a', 's2', { sent: 10, found: 10, spam: 10 }),
      at('ws_a', 's3', { sent: 10, found: 10, spam: 10 }),
      at('ws_b', 's1', { sent: 10, found: 10, spam: 10 }),
      at('ws_c', 's1', { sent: 10, found: 10, spam: 10 }),
    ];
    expect(weighEvidence(OWN, reports).corroborated).toEqual([]);
    // with ws_b on a server of its own, a, b and c each have one: three voices
    reports[3] = at('ws_b', 's4', { sent: 10, found: 10, spam: 10 });
    expect(weighEvidence(OWN, reports).corroborated).toEqual(['spam']);
  });

  it('does not let young receivers, or ones on an unknown server, corroborate, and sets their problems aside', () => {
    const established = [
      at('ws_a', 's1', { sent: 10, found: 10, spam: 5 }),
      at('ws_b', 's2', { sent: 10, found: 10, spam: 5 }),
    ];
    const young = at('ws_c', 's3', { sent: 10, found: 10, spam: 10, established: false });
    const unknown = at('ws_d', 's4', { sent: 10, found: 10, spam: 10, server: null });
    expect(weighEvidence(OWN, [...established, young, unknown]).corroborated).toEqual([]);
    // corroborated by three established parties, the problem counts as they saw it; the young one's spam does not
    const weighed = weighEvidence(OWN, [...established, at('ws_e', 's5', { sent: 10, found: 10, spam: 5 }), young]);
    expect(weighed.corroborated).toEqual(['spam']);
    expect(weighed.trusted).toEqual({ sent: 30, found: 30, spam: 15, bounced: 0, lost: 0 });
  });
});

describe('partiesOf', () => {
  it('makes one party of the workspaces that share an owner or administrator, down the chain', () => {
    const parties = partiesOf(
      ['ws_1', 'ws_2', 'ws_3', 'ws_4', 'ws_alone'],
      [
        { workspaceId: 'ws_1', userId: 'mallory' },
        { workspaceId: 'ws_2', userId: 'mallory' },
        // ws_3 shares nobody with ws_1, but its administrator also runs ws_2
        { workspaceId: 'ws_2', userId: 'trent' },
        { workspaceId: 'ws_3', userId: 'trent' },
        { workspaceId: 'ws_4', userId: 'alice' },
      ],
    );
    expect(parties.get('ws_1')).toBe(parties.get('ws_2'));
    expect(parties.get('ws_1')).toBe(parties.get('ws_3'));
    expect(new Set(parties.values()).size).toBe(3);
  });
});

describe('serverNetwork', () => {
  it('groups IPv4 addresses by /24 and IPv6 ones by /48', () => {
    expect(serverNetwork('192.0.2.17')).toBe('192.0.2.0/24');
    expect(serverNetwork('::ffff:192.0.2.200')).toBe('192.0.2.0/24');
    expect(serverNetwork('2001:db8:1:2::25')).toBe(serverNetwork('2001:0db8:0001:ffff::1'));
    expect(serverNetwork('2001:db8:2::25')).not.toBe(serverNetwork('2001:db8:1::25'));
    expect(serverNetwork('not an address')).toBeNull();
  });
});

describe('isEstablished', () => {
  const now = new Date('2025-06-30T10:00:00Z');
  const old = new Date(now.getTime() - (ESTABLISHED_AFTER_DAYS + 1) * 86_400_000).toISOString();
  const fresh = new Date(now.getTime() - 86_400_000).toISOString();
  const facts = { mailboxId: 'mb', workspaceId: 'ws', imapAddress: '192.0.2.1' };

  it(`needs a round trip and ${ESTABLISHED_AFTER_DAYS} days of both the proof and the workspace`, () => {
    expect(isEstablished({ ...facts, provenAt: old, workspaceCreatedAt: old }, now)).toBe(true);
    expect(isEstablished({ ...facts, provenAt: fresh, workspaceCreatedAt: old }, now)).toBe(false);
    expect(isEstablished({ ...facts, provenAt: old, workspaceCreatedAt: fresh }, now)).toBe(false);
    expect(isEstablished({ ...facts, provenAt: null, workspaceCreatedAt: old }, now)).toBe(false);
  });
});

describe('boundedScore', () => {
  it(`lets evidence that was set aside move the score by at most ${FOREIGN_EVIDENCE_BOUND} points`, () => {
    const weighed = weighEvidence(OWN, [
      healthyAtHome,
      at('ws_hostile', 'junk.test', { sent: 20, found: 20, spam: 20 }),
      at('ws_hostile', 'void.test', { sent: 10, found: 0, lost: 10 }),
    ]);
    expect(reputationScore(weighed.all)).toBeLessThan(50);
    expect(reputationScore(weighed.trusted)).toBe(100);
    expect(boundedScore(reputationScore, weighed)).toBe(100 - FOREIGN_EVIDENCE_BOUND);
  });

  it('is the plain score when everything counts', () => {
    const weighed = weighEvidence(OWN, [at(OWN, 'home.test', { sent: 20, found: 20, spam: 4 })]);
    expect(boundedScore(reputationScore, weighed)).toBe(80);
  });
});
