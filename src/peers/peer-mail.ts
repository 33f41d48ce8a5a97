/*
 * Mail between peers. Each side plans only from its own mailboxes; the other side's participating
 * addresses are stand-ins (peer-mail.repository.ts) that the planner takes as partners under the
 * same bounds and pair rules as local ones. The `peerExchange` job, for each active peer:
 *
 * 1. fetches its offer and brings the stand-ins in line (a volume each within the ceiling it gives us);
 * 2. announces our planned mail to its addresses (Message-ID, from, to, due time, thread), never
 *    more a UTC day than its ceiling: the sender sends a message to a stand-in only once the
 *    peer accepted its announcement, so the peer's reader touches only mail it can identify;
 * 3. reports what we found of its mail (a placement, or lost), each outcome once.
 *
 * The receiving half checks every announcement against what it offered that peer, counts it
 * against the ceiling it gave it, and applies evidence only to mail it sent that peer, once per
 * message. A peer over its ceiling, or reporting on mail it was never sent, is paused on the spot
 * with the reason; its mail stops at once.
 */
import { Value } from '@sinclair/typebox/value';
import type { Kysely } from 'kysely';
import type { Clock } from '../clock.js';
import type { Database } from '../db/schema.js';
import { markJudgementsDue, pullSyncDue } from '../engine/mailbox-engine-state.repository.js';
import { AppError, ForbiddenError, ValidationError } from '../http/errors.js';
import { DEFAULT_WARMUP } from '../mailboxes/warmup-settings.js';
import { PeerCallError } from './peer-client.js';
import {
  applyPeerOutcome,
  countAnnouncedOfDay,
  countExpectedOfDay,
  ensurePeerWorkspace,
  findByMessageId,
  findLocalMailbox,
  findStandIn,
  insertExpected,
  listUnannounced,
  listUnreported,
  markAnnounced,
  markReported,
  pauseStandIns,
  syncStandIns,
  type OutgoingPeerMessage,
} from './peer-mail.repository.js';
import {
  AnnounceAnswer,
  EvidenceAnswer,
  type AnnounceBody,
  type AnnouncedMessage,
  type EvidenceBody,
} from './peer-mail.schemas.js';
import { listPeers, offeredMailboxes, recordTheirOffer, type PeerRow } from './peers.repository.js';
import { OfferAnswer } from './peers.schemas.js';
import type { PeersService } from './peers.service.js';

/** Planned mail is announced this far ahead of its due time (and the job runs far more often). */
export const ANNOUNCE_AHEAD_MS = 6 * 3_600_000;
/** Messages announced, and outcomes reported, per request; a pass makes a few requests per peer. */
export const PEER_BATCH = 50;
export const PEER_BATCHES_PER_PASS = 4;
/** How far an announced due time may lie from now: a day back (a late sender), two days ahead. */
const DUE_BACK_MS = 24 * 3_600_000;
const DUE_AHEAD_MS = 48 * 3_600_000;
/** How far ahead of our clock a reported find may lie (the peers' clocks differ a little). */
const FOUND_SKEW_MS = 5 * 60_000;
/** The reader of a mailbox that mail was announced to looks soon after the mail is due. */
const SYNC_AFTER_DUE_MS = 2 * 60_000;

export interface PeerMailDeps {
  db: Kysely<Database>;
  clock: Clock;
  peers: PeersService;
}

/** What one pass of the `peerExchange` job did. */
export interface PeerExchangeSummary {
  ran: true;
  /** Active peers talked to. */
  peers: number;
  /** Messages the peers accepted our announcements of. */
  announced: number;
  /** Outcomes of their mail reported to them. */
  reported: number;
  /** Peers that could not be reached or refused (their reason is on the peer). */
  failed: number;
}

/** A stand-in's settings: the peer's window and time zone, and a volume the ceiling can carry. */
function standInWarmup(offered: OfferAnswer['mailboxes'][number], volume: number): string {
  return JSON.stringify({
    ...DEFAULT_WARMUP,
    startVolume: volume,
    rampUpIncrement: 1,
    dailyLimit: volume,
    sendWindow: offered.window,
    timezone: offered.timezone,
    weekdaysOnly: offered.weekdaysOnly,
  });
}

function utcDayOf(iso: string): string {
  return iso.slice(0, 10);
}

export function createPeerMail({ db, clock, peers }: PeerMailDeps) {
  const nowIso = () => clock.now().toISOString();

  /** A call's refusal as words for the operator, or undefined when it answered 200. */
  function refusal(status: number, json: unknown): string | undefined {
    if (status === 200) return undefined;
    const code = (json as { code?: unknown } | null)?.code;
    const named = typeof code === 'string' && /^[a-z_]{1,40}$/.test(code) ? ` (${code})` : '';
    return `the peer answered ${status}${named}`;
  }

  /** Step 1: the peer's offer and its stand-ins; the ceiling it gives us, or undefined when it refused. */
  async function refreshOffer(peer: PeerRow): Promise<number | undefined> {
    const answer = await peers.call(peer, { method: 'GET', url: '/peer/v1/offer' });
    const refused = refusal(answer.status, answer.json);
    if (refused !== undefined || !Value.Check(OfferAnswer, answer.json)) {
      // a peer that paused or ended the peering sends nothing and takes nothing: so do we
      await pauseStandIns(db, peer.id, nowIso());
      await peers.noteFailure(peer.id, refused ?? "the peer's offer is not in the protocol's form");
      return undefined;
    }
    const offer = answer.json;
    const at = nowIso();
    // a peer may not name our own addresses: we would be writing to ourselves on its word
    const theirs: OfferAnswer['mailboxes'] = [];
    for (const mailbox of offer.mailboxes) if (!(await findLocalMailbox(db, mailbox.address))) theirs.push(mailbox);
    // the ceiling shared out, at least one each: announcing holds the day's total to the ceiling
    const share = Math.max(1, Math.floor(offer.dailyCeiling / Math.max(1, theirs.length)));
    await ensurePeerWorkspace(db, peer.id, peer.url, at);
    await syncStandIns(
      db,
      peer.id,
      offer.dailyCeiling === 0
        ? []
        : theirs.map((mailbox) => ({
            email: mailbox.address,
            warmup: standInWarmup(mailbox, Math.max(1, Math.min(mailbox.dailyVolume, share))),
          })),
      at,
    );
    await recordTheirOffer(db, peer.id, offer.dailyCeiling, at);
    return offer.dailyCeiling;
  }

  /** Step 2: our mail due soon to its addresses, within the ceiling it gives us for each UTC day. */
  async function announce(peer: PeerRow, ceiling: number): Promise<number> {
    const now = clock.now();
    const due = await listUnannounced(
      db,
      peer.id,
      new Date(now.getTime() + ANNOUNCE_AHEAD_MS).toISOString(),
      PEER_BATCH * PEER_BATCHES_PER_PASS,
    );
    const room = new Map<string, number>();
    const within: OutgoingPeerMessage[] = [];
    for (const message of due) {
      const day = utcDayOf(message.due_at);
      let left = room.get(day);
      if (left === undefined) left = ceiling - (await countAnnouncedOfDay(db, peer.id, day));
      if (left <= 0) continue;
      room.set(day, left - 1);
      within.push(message);
    }
    let announced = 0;
    for (let start = 0; start < within.length; start += PEER_BATCH) {
      const batch = within.slice(start, start + PEER_BATCH);
      const body: AnnounceBody = {
        messages: batch.map((message) => ({
          messageId: message.message_id,
          from: message.from,
          to: message.to,
          dueAt: message.due_at,
          turn: message.turn,
          inReplyTo: message.parent_message_id,
        })),
      };
      const answer = await peers.call(peer, { method: 'POST', url: '/peer/v1/messages', body });
      const refused = refusal(answer.status, answer.json);
      if (refused !== undefined || !Value.Check(AnnounceAnswer, answer.json)) {
        await peers.noteFailure(peer.id, refused ?? "the peer's answer is not in the protocol's form");
        break;
      }
      await markAnnounced(
        db,
        batch.map((message) => message.id),
        nowIso(),
      );
      announced += batch.length;
    }
    return announced;
  }

  /** Step 3: where we found its mail, each outcome reported once. */
  async function report(peer: PeerRow): Promise<number> {
    let reported = 0;
    for (let round = 0; round < PEER_BATCHES_PER_PASS; round += 1) {
      const outcomes = await listUnreported(db, peer.id, PEER_BATCH);
      if (outcomes.length === 0) break;
      const body: EvidenceBody = {
        reports: outcomes.map((row) => ({ messageId: row.message_id, outcome: row.outcome, at: row.at })),
      };
      const answer = await peers.call(peer, { method: 'POST', url: '/peer/v1/evidence', body });
      const refused = refusal(answer.status, answer.json);
      if (refused !== undefined || !Value.Check(EvidenceAnswer, answer.json)) {
        await peers.noteFailure(peer.id, refused ?? "the peer's answer is not in the protocol's form");
        break;
      }
      await markReported(db, outcomes);
      reported += outcomes.length;
    }
    return reported;
  }

  /** Refuses a request with nothing changed, naming the message at fault. */
  function badMessage(index: number, field: string, message: string): ValidationError {
    return ValidationError.field(`/body/messages/${index}/${field}`, message);
  }

  return {
    /** One pass of the `peerExchange` job over every active peer. */
    async exchange(): Promise<PeerExchangeSummary> {
      const summary: PeerExchangeSummary = { ran: true, peers: 0, announced: 0, reported: 0, failed: 0 };
      for (const peer of (await listPeers(db)).filter((row) => row.state === 'active')) {
        summary.peers += 1;
        try {
          const ceiling = await refreshOffer(peer);
          if (ceiling === undefined) {
            summary.failed += 1;
            continue;
          }
          summary.announced += await announce(peer, ceiling);
          summary.reported += await report(peer);
        } catch (error) {
          if (!(error instanceof PeerCallError)) throw error;
          summary.failed += 1;
          await peers.noteFailure(peer.id, error.message);
        }
      }
      return summary;
    },

    /**
     * A peer's announcements: each from one of its addresses we know, to one of the mailboxes we
     * offer it, due about now, a reply only within a thread of that same pair. All are checked
     * before any is kept; an announcement made before is counted once. Over the ceiling we gave
     * it, the peer is paused with the reason, and nothing of the request is kept.
     */
    async acceptAnnouncements(peer: PeerRow, body: AnnounceBody): Promise<AnnounceAnswer> {
      const now = clock.now();
      const offered = new Set(
        (await offeredMailboxes(db, JSON.parse(peer.offer_domains) as string[], peer.offer_mailboxes)).map((row) =>
          row.email.toLowerCase(),
        ),
      );
      const checked: Array<{ message: AnnouncedMessage; from: string; to: string; thread: string }> = [];
      const fresh = new Map<string, number>();
      for (const [index, message] of body.messages.entries()) {
        const due = Date.parse(message.dueAt);
        if (!(due >= now.getTime() - DUE_BACK_MS && due <= now.getTime() + DUE_AHEAD_MS))
          throw badMessage(index, 'dueAt', 'must lie between a day ago and two days ahead');
        const standIn = await findStandIn(db, peer.id, message.from);
        if (!standIn || standIn.status !== 'peer')
          throw badMessage(index, 'from', 'is not an address your offer names (fetched lately)');
        const local = offered.has(message.to.toLowerCase()) ? await findLocalMailbox(db, message.to) : undefined;
        if (!local) throw badMessage(index, 'to', 'is not an address this installation offers you');
        const known = await findByMessageId(db, message.messageId);
        if (known) {
          if (known.sender_mailbox_id !== standIn.id || known.recipient_mailbox_id !== local.id)
            throw badMessage(index, 'messageId', 'is the Message-ID of other mail');
          continue;
        }
        let thread = message.messageId;
        if (message.turn > 1) {
          const parent = message.inReplyTo === null ? undefined : await findByMessageId(db, message.inReplyTo);
          if (!parent || parent.sender_mailbox_id !== local.id || parent.recipient_mailbox_id !== standIn.id)
            throw badMessage(index, 'inReplyTo', 'must name our mail from its recipient to its sender');
          thread = parent.thread_id;
        }
        const day = utcDayOf(new Date(due).toISOString());
        fresh.set(day, (fresh.get(day) ?? 0) + 1);
        checked.push({ message, from: standIn.id, to: local.id, thread });
      }
      for (const [day, count] of fresh) {
        const expected = await countExpectedOfDay(db, peer.id, day);
        if (expected + count > peer.daily_ceiling) {
          const reason = `it announced ${expected + count} messages for ${day}, over the ceiling of ${peer.daily_ceiling} a day it was given`;
          await peers.pauseAutomatically(peer.id, reason);
          throw new ForbiddenError(`this installation paused the peering: ${reason}`, 'peer_over_ceiling');
        }
      }
      const at = now.toISOString();
      for (const { message, from, to, thread } of checked) {
        const dueAt = new Date(Date.parse(message.dueAt)).toISOString();
        await insertExpected(
          db,
          {
            message_id: message.messageId,
            thread_id: thread,
            sender_mailbox_id: from,
            recipient_mailbox_id: to,
            turn: message.turn,
            parent_message_id: message.inReplyTo,
            due_at: dueAt,
          },
          at,
        );
        await pullSyncDue(db, [to], new Date(Date.parse(dueAt) + SYNC_AFTER_DUE_MS));
      }
      return { accepted: body.messages.length };
    },

    /**
     * A peer's evidence about our mail: only on mail we sent that peer, each message's outcome
     * applied once, as our own reader would record it. A report on mail we never sent it, or
     * found before it was sent or in the future, is junk: the peer is paused with the reason, and
     * nothing of the request is applied.
     */
    async applyEvidence(peer: PeerRow, body: EvidenceBody): Promise<EvidenceAnswer> {
      const now = clock.now();
      /** Why a report cannot be true of mail we sent this peer; undefined when it may be. */
      const junkIn = (
        report: EvidenceBody['reports'][number],
        row: Awaited<ReturnType<typeof findByMessageId>>,
      ): string | undefined => {
        const at = Date.parse(report.at);
        if (!row || row.recipient_peer_id !== peer.id || row.sender_peer_id !== null)
          return `it reported on ${report.messageId}, which this installation never sent it`;
        if (at > now.getTime() + FOUND_SKEW_MS) return `it reported finding ${report.messageId} in the future`;
        if (row.sent_at !== null && at < Date.parse(row.sent_at) - FOUND_SKEW_MS && report.outcome !== 'lost')
          return `it reported finding ${report.messageId} before it was sent`;
        return undefined;
      };
      const rows = [];
      for (const [index, report] of body.reports.entries()) {
        const row = await findByMessageId(db, report.messageId);
        const junk = junkIn(report, row);
        if (junk !== undefined) {
          await peers.pauseAutomatically(peer.id, junk);
          throw new AppError(422, 'junk_evidence', `this installation paused the peering: ${junk}`, [
            { path: `/body/reports/${index}`, message: junk },
          ]);
        }
        // junkIn refuses a message we do not have
        rows.push({ row: row!, report });
      }
      let applied = 0;
      const senders = new Set<string>();
      for (const { row, report } of rows) {
        if (await applyPeerOutcome(db, row, report.outcome, new Date(Math.min(Date.parse(report.at), now.getTime())))) {
          applied += 1;
          senders.add(row.sender_mailbox_id);
        }
      }
      // what the peer found is evidence about our senders: reputation and the health guard judge them again
      await markJudgementsDue(db, [...senders], now);
      return { applied };
    },
  };
}

export type PeerMail = ReturnType<typeof createPeerMail>;
