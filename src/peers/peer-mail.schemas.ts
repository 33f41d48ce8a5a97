import { Type, type Static } from '@sinclair/typebox';

// The mail half of the peer protocol: the sender announces each message before it sends it, and
// the receiver reports back where it found it. Closed, bounded bodies: a Message-ID and two
// addresses are what the mail carries anyway; nothing else of the mail or the mailboxes goes.

const MessageId = Type.String({
  minLength: 5,
  maxLength: 250,
  pattern: '^<[!-;=?-~]+@[!-;=?-~]+>$',
  description: 'The RFC 5322 Message-ID, with its angle brackets',
});

const Address = Type.String({
  minLength: 3,
  maxLength: 320,
  pattern: '^[^\\s@<>]+@[^\\s@<>]+$',
  description: 'A mailbox address',
});

export const AnnouncedMessage = Type.Object(
  {
    messageId: MessageId,
    from: Address,
    to: Address,
    dueAt: Type.String({ format: 'date-time', description: 'When the sender plans to send it' }),
    turn: Type.Integer({ minimum: 1, maximum: 50, description: '1 opens a thread; 2 answers it, ...' }),
    inReplyTo: Type.Union([MessageId, Type.Null()], { description: 'The message it answers (turn 2 on)' }),
  },
  { additionalProperties: false },
);
export type AnnouncedMessage = Static<typeof AnnouncedMessage>;

/** POST /peer/v1/messages: mail the caller is about to send to addresses this installation offered it. */
export const AnnounceBody = Type.Object(
  { messages: Type.Array(AnnouncedMessage, { minItems: 1, maxItems: 50 }) },
  { additionalProperties: false },
);
export type AnnounceBody = Static<typeof AnnounceBody>;

export const AnnounceAnswer = Type.Object(
  {
    accepted: Type.Integer({ minimum: 0, description: 'Messages now expected (announced again: counted once)' }),
  },
  { additionalProperties: false },
);
export type AnnounceAnswer = Static<typeof AnnounceAnswer>;

export const PEER_OUTCOMES = ['inbox', 'spam', 'promotions', 'other', 'lost'] as const;
export type PeerOutcome = (typeof PEER_OUTCOMES)[number];

export const EvidenceReport = Type.Object(
  {
    messageId: MessageId,
    outcome: Type.Union(
      PEER_OUTCOMES.map((outcome) => Type.Literal(outcome)),
      {
        description:
          'Where the receiving mailbox found it (a placement), or `lost`: not found 48 h after it was due although the mailbox was read since',
      },
    ),
    at: Type.String({ format: 'date-time', description: 'When it was found (or given up as lost)' }),
  },
  { additionalProperties: false },
);
export type EvidenceReport = Static<typeof EvidenceReport>;

/** POST /peer/v1/evidence: what the caller observed of the mail this installation sent it. */
export const EvidenceBody = Type.Object(
  { reports: Type.Array(EvidenceReport, { minItems: 1, maxItems: 100 }) },
  { additionalProperties: false },
);
export type EvidenceBody = Static<typeof EvidenceBody>;

export const EvidenceAnswer = Type.Object(
  { applied: Type.Integer({ minimum: 0, description: 'Reports that changed something (a repeat changes nothing)' }) },
  { additionalProperties: false },
);
export type EvidenceAnswer = Static<typeof EvidenceAnswer>;
