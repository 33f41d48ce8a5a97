import { describe, expect, it } from 'vitest';
import { weighEvidence, type ReceiverEvidence } from './evidence.js';
import {
  FILTERING_MIN_SENDERS,
  findFilteringReceivers,
  type FilingTally,
  type ReceiverStanding,
} from './receiver-filtering.js';

/** Every receiver in one workspace (one party), each on its own server, established. */
function onePool(ids: readonly string[], party = 'ws_own'): Map<string, ReceiverStanding> {
  return new Map(ids.map((id) => [id, { party, server: `${id}.net`, established: true }]));
}

/**
 * The mail of `senders` to `receivers`, `each` found per pair: `junks(sender, receiver)` says
 * whether that receiver filed it all into spam, otherwise it was all in the inbox.
 */
function mail(
  senders: readonly string[],
  receivers: readonly string[],
  each: number,
  junks: (sender: string, receiver: string) => boolean,
): FilingTally[] {
  return senders.flatMap((senderId) =>
    receivers
      .filter((receiverId) => receiverId !== senderId)
      .map((receiverId) => ({ senderId, receiverId, found: each, spam: junks(senderId, receiverId) ? each : 0 })),
  );
}

const POOL = ['alice', 'bob', 'carol', 'dave', 'erin'];

describe('findFilteringReceivers', () => {
  it('names the receiver that junks every sender the others find in the inbox, within one workspace', () => {
    const tallies = mail(POOL, POOL, 2, (_, receiver) => receiver === 'erin');
    const findings = findFilteringReceivers(tallies, onePool(POOL));
    expect([...findings.keys()]).toEqual(['erin']);
    expect(findings.get('erin')).toEqual({
      junkedSenders: 4,
      senders: 4,
      spam: 8,
      found: 8,
      witnessSpam: 0,
      witnessFound: 24,
    });
  });

  it('does not excuse a sender junked by everyone: no receiver becomes a culprit through it', () => {
    // every receiver junks junky, and only junky: each "junks" one sender, which nobody finds in the inbox
    const pool = [...POOL, 'junky'];
    const tallies = mail(pool, pool, 3, (sender) => sender === 'junky');
    expect(findFilteringReceivers(tallies, onePool(pool)).size).toBe(0);
    // and a real culprit beside it is named, while junky's spam at everyone else still counts against it
    const withCulprit = mail(pool, pool, 3, (sender, receiver) => sender === 'junky' || receiver === 'erin');
    const findings = findFilteringReceivers(withCulprit, onePool(pool));
    expect([...findings.keys()]).toEqual(['erin']);
    const junkyEvidence: ReceiverEvidence[] = POOL.map((receiver) => ({
      workspaceId: 'ws_own',
      party: 'ws_own',
      server: `${receiver}.net`,
      established: true,
      filtering: findings.has(receiver),
      sent: 3,
      found: 3,
      spam: 3,
      bounced: 0,
      lost: 0,
    }));
    const weighed = weighEvidence('ws_own', junkyEvidence);
    expect(weighed.trusted.spam).toBe(12);
    expect(weighed.trusted.found).toBe(12);
  });

  it('needs many senders: junking one or two is the senders’ business, not a filter', () => {
    const two = mail(POOL, POOL, 4, (sender, receiver) => receiver === 'erin' && ['alice', 'bob'].includes(sender));
    expect(findFilteringReceivers(two, onePool(POOL)).size).toBe(0);
    // three of four: enough senders, and most of them
    const three = mail(POOL, POOL, 4, (sender, receiver) => receiver === 'erin' && sender !== 'dave');
    expect([...findFilteringReceivers(three, onePool(POOL)).keys()]).toEqual(['erin']);
    expect(FILTERING_MIN_SENDERS).toBe(3);
  });

  it('needs the samples: one email from each of three senders proves nothing yet', () => {
    const pool = ['alice', 'bob', 'carol', 'erin'];
    const thin = mail(pool, pool, 1, (_, receiver) => receiver === 'erin');
    // 3 of 3 junked: the lower bound (44 %) is not over 50 %
    expect(findFilteringReceivers(thin, onePool(pool)).size).toBe(0);
    const enough = mail(pool, pool, 2, (_, receiver) => receiver === 'erin');
    expect([...findFilteringReceivers(enough, onePool(pool)).keys()]).toEqual(['erin']);
  });

  it('one hostile party finding mail in its inboxes cannot have an honest receiver named', () => {
    // an honest receiver (victim's party) junks three hostile senders' mail — rightly; the hostile
    // party's own receivers, on many servers, claim to find that mail in the inbox
    const senders = ['h1', 'h2', 'h3'];
    const hostileReceivers = ['r1', 'r2', 'r3'];
    const standing = new Map<string, ReceiverStanding>([
      ['honest', { party: 'victim', server: 'honest.net', established: true }],
      ...hostileReceivers.map((id): [string, ReceiverStanding] => [
        id,
        { party: 'hostile', server: `${id}.net`, established: true },
      ]),
    ]);
    const tallies = mail(senders, ['honest', ...hostileReceivers], 5, (_, receiver) => receiver === 'honest');
    expect(findFilteringReceivers(tallies, standing).size).toBe(0);
    // three independent parties on three servers are heard, as for any report
    for (const [index, id] of hostileReceivers.entries())
      standing.set(id, { party: `p${index}`, server: `${id}.net`, established: true });
    expect([...findFilteringReceivers(tallies, standing).keys()]).toEqual(['honest']);
    // …but not young ones
    for (const id of hostileReceivers) standing.set(id, { ...standing.get(id)!, established: false });
    expect(findFilteringReceivers(tallies, standing).size).toBe(0);
  });
});

describe('weighEvidence with a filtering receiver', () => {
  it('sets its spam aside for a sender of its own workspace, in the trusted and in all the evidence', () => {
    const receiver = (server: string, spam: number, filtering = false): ReceiverEvidence => ({
      workspaceId: 'ws_own',
      party: 'ws_own',
      server,
      established: true,
      filtering,
      sent: 6,
      found: 6,
      spam,
      bounced: 0,
      lost: 0,
    });
    const weighed = weighEvidence('ws_own', [
      receiver('a.net', 0),
      receiver('b.net', 0),
      receiver('erin.net', 6, true),
    ]);
    expect(weighed.trusted).toEqual({ sent: 12, found: 12, spam: 0, bounced: 0, lost: 0 });
    expect(weighed.all).toEqual(weighed.trusted);
  });
});
