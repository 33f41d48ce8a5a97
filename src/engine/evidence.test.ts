import { describe, expect, it } from 'vitest';
import {
  boundedScore,
  CORROBORATING_DOMAINS,
  CORROBORATING_WORKSPACES,
  FOREIGN_EVIDENCE_BOUND,
  weighEvidence,
  type ReceiverEvidence,
} from './evidence.js';
import { reputationScore } from './reputation.js';

const OWN = 'ws_own';

function at(workspaceId: string, domain: string, counts: Partial<ReceiverEvidence> = {}): ReceiverEvidence {
  const sent = counts.sent ?? 10;
  return { workspaceId, domain, sent, found: sent, spam: 0, bounced: 0, lost: 0, ...counts };
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

  it(`counts a problem that ${CORROBORATING_WORKSPACES} workspaces on ${CORROBORATING_DOMAINS} domains agree on`, () => {
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

  it('needs as many workspaces as that: two agreeing are not enough', () => {
    const reports = [
      at('ws_a', 'a.test', { sent: 10, found: 0, lost: 10 }),
      at('ws_b', 'b.test', { sent: 10, found: 0, lost: 10 }),
    ];
    expect(weighEvidence(OWN, reports).corroborated).toEqual([]);
  });

  it('needs independent domains: three workspaces whose receivers share one domain are one voice', () => {
    const reports = ['ws_a', 'ws_b', 'ws_c'].map((ws) => at(ws, 'same.test', { sent: 10, found: 10, spam: 10 }));
    const weighed = weighEvidence(OWN, [healthyAtHome, ...reports]);
    expect(weighed.corroborated).toEqual([]);
    expect(weighed.trusted).toEqual({ sent: 10, found: 10, spam: 0, bounced: 0, lost: 0 });
  });

  it('a workspace that sees the problem only now and then does not count as reporting it', () => {
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
    // two lost messages reported by two workspaces only: set aside
    expect(weighed.trusted).toEqual({ sent: 28, found: 28, spam: 9, bounced: 0, lost: 0 });
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
