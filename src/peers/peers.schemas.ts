import { Type, type Static } from '@sinclair/typebox';

// Two contracts: the operator's admin API (/api/peers) and the peer protocol (/peer/v1), which
// other installations speak. The protocol's bodies are small and closed (no extra fields).

const PublicKeyText = Type.String({
  pattern: '^[A-Za-z0-9_-]{43}$',
  description: "base64url of the 32 raw bytes of an Ed25519 public key (`warmup peer key` prints an installation's)",
});

const Domain = Type.String({
  minLength: 3,
  maxLength: 253,
  pattern: '^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+$',
  description: 'A domain in lower case',
});

export const PeerOffer = Type.Object(
  {
    domains: Type.Array(Domain, {
      maxItems: 20,
      uniqueItems: true,
      description: 'The domains whose active, proven mailboxes take part with this peer',
    }),
    mailboxes: Type.Integer({ minimum: 0, maximum: 1000, description: 'At most this many of them' }),
    dailyCeiling: Type.Integer({
      minimum: 0,
      maximum: 100_000,
      description: "Mail a day accepted from the peer's mailboxes",
    }),
  },
  { additionalProperties: false },
);
export type PeerOffer = Static<typeof PeerOffer>;

export const PeerIdentity = Type.Object({
  publicKey: PublicKeyText,
  fingerprint: Type.String({ description: 'A short form to compare by eye or over the phone' }),
});
export type PeerIdentity = Static<typeof PeerIdentity>;

export const PeerStateSchema = Type.Union(
  [Type.Literal('pending'), Type.Literal('active'), Type.Literal('paused'), Type.Literal('removed')],
  {
    description:
      '`pending` until the peer shows, by a signed handshake, that it added this installation too; then `active`. `paused` and `removed` refuse its requests at once.',
  },
);

const count = (description: string) => Type.Integer({ minimum: 0, description });
export const PeerFlow = Type.Object({
  announced: count('Messages announced (and so allowed to be sent)'),
  found: count('Of them, found by their recipient'),
  inbox: count('Found in the inbox'),
  spam: count('Found in spam'),
  lost: count('Never found, 48 h after they were due, though the recipient was read since'),
});
export type PeerFlow = Static<typeof PeerFlow>;

export const Peer = Type.Object({
  id: Type.String(),
  url: Type.String(),
  publicKey: PublicKeyText,
  fingerprint: Type.String(),
  state: PeerStateSchema,
  offer: PeerOffer,
  handshakeAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'When a signed handshake last succeeded, either way',
  }),
  lastError: Type.Union([Type.String(), Type.Null()], {
    description: 'Why our last call to the peer failed (handshake, offer, announcement or evidence)',
  }),
  pausedReason: Type.Union([Type.String(), Type.Null()], {
    description:
      'Why this installation paused the peer on its own (it announced more than its ceiling, or reported evidence on mail it was never sent); null when an operator paused it or it is not paused',
  }),
  flows: Type.Object(
    {
      toPeer: PeerFlow,
      fromPeer: PeerFlow,
    },
    {
      description:
        "What flowed each way over the last 7 days (by due time): our mailboxes' mail to the peer's, as the peer reported where it found it, and the peer's mail to ours, as we found it",
    },
  ),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
});
export type Peer = Static<typeof Peer>;

export const PeerEnvelope = Type.Object({ peer: Peer });
export const PeerList = Type.Object({ peers: Type.Array(Peer) });

export const CreatePeerBody = Type.Object(
  {
    url: Type.String({
      minLength: 8,
      maxLength: 2048,
      description: "The peer's base URL (https; no user, query or fragment)",
    }),
    publicKey: PublicKeyText,
    offer: PeerOffer,
  },
  { additionalProperties: false },
);
export type CreatePeerBody = Static<typeof CreatePeerBody>;

/** POST /peer/v1/hello: who is calling, by the URL the callee added it under. */
export const HelloBody = Type.Object(
  { url: Type.String({ minLength: 8, maxLength: 2048, description: "The caller's own base URL" }) },
  { additionalProperties: false },
);
export type HelloBody = Static<typeof HelloBody>;

export const HelloAnswer = Type.Object({ state: Type.Literal('active') }, { additionalProperties: false });
export type HelloAnswer = Static<typeof HelloAnswer>;

export const OfferedMailbox = Type.Object(
  {
    address: Type.String({ maxLength: 320 }),
    dailyVolume: Type.Integer({ minimum: 0, maximum: 500, description: 'The most it sends a day (its dailyLimit)' }),
    window: Type.Object(
      {
        start: Type.String({ pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$' }),
        end: Type.String({ pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$' }),
      },
      { additionalProperties: false },
    ),
    timezone: Type.String({ minLength: 1, maxLength: 64 }),
    weekdaysOnly: Type.Boolean(),
  },
  { additionalProperties: false },
);
export type OfferedMailbox = Static<typeof OfferedMailbox>;

/** GET /peer/v1/offer: the participating addresses, their volumes and windows, and nothing else. */
export const OfferAnswer = Type.Object(
  {
    mailboxes: Type.Array(OfferedMailbox, { maxItems: 1000 }),
    dailyCeiling: Type.Integer({
      minimum: 0,
      maximum: 100_000,
      description: "Mail a day the answering installation accepts from the caller's mailboxes",
    }),
  },
  { additionalProperties: false },
);
export type OfferAnswer = Static<typeof OfferAnswer>;
