import type { ColumnType } from 'kysely';

// The peering tables (migration 043), apart from schema.ts to keep each file short.

/** This installation's Ed25519 key pair: one row, made on first use. */
export interface PeerIdentityTable {
  id: number;
  /** base64url of the 32 raw bytes. */
  public_key: string;
  /** The PKCS #8 private key, encrypted with the installation's secret key (secrets.ts). */
  private_key: string;
  created_at: string;
}

export type PeerState = 'pending' | 'active' | 'paused' | 'removed';

export interface PeersTable {
  id: string;
  /** The peer's base URL, https (loopback http only where a test allows it). */
  url: string;
  /** base64url of the peer's 32-byte Ed25519 public key, the keyid of its signatures. */
  public_key: string;
  state: PeerState;
  /** JSON array of the domains whose active mailboxes we offer this peer. */
  offer_domains: string;
  /** At most this many of our mailboxes take part with this peer. */
  offer_mailboxes: number;
  /** Mail a day we accept from this peer's mailboxes. */
  daily_ceiling: number;
  /** When a signed handshake last succeeded, either way. */
  handshake_at: string | null;
  /** Why our last handshake with the peer failed, in words fit for the operator; null after a success. */
  last_error: string | null;
  created_at: string;
  updated_at: string;
  /** Mail a day the peer accepts from our mailboxes, as its last offer said (migration 045). */
  their_ceiling: ColumnType<number | null, number | null | undefined, number | null>;
  /** When its offer was last fetched and its stand-ins brought up to date. */
  offer_fetched_at: ColumnType<string | null, string | null | undefined, string | null>;
  /** Why it was paused by this installation on its own (over its ceiling, junk evidence); null otherwise. */
  paused_reason: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface PeerNoncesTable {
  /** The keyid the nonce was signed under. */
  key_id: string;
  nonce: string;
  /** After this the signature is refused for its age anyway, so the nonce may be forgotten. */
  expires_at: string;
}

/** The peering tables, as `Database` (schema.ts) takes them in. */
export interface PeerTables {
  peer_identity: PeerIdentityTable;
  peers: PeersTable;
  peer_nonces: PeerNoncesTable;
}

type Nullable<T> = ColumnType<T | null, T | null | undefined, T | null>;

/** The workspace of a peer's stand-ins (migration 045): nobody is a member of it. */
export interface PeerWorkspaceColumns {
  /** The peer whose stand-in mailboxes it holds; null for every workspace of people. */
  peer_id: Nullable<string>;
}

/** A stand-in for a peer's address (status `peer`, peers/peer-mail.ts). */
export interface PeerStandInColumns {
  /** The peer whose address this stand-in is; null for every mailbox of a workspace. */
  peer_id: Nullable<string>;
}

/** Mail to or from a peer's address (migration 045). */
export interface PeerMessageColumns {
  /** To a peer's address: when the peer accepted its announcement; it is sent only then. */
  peer_announced_at: Nullable<string>;
  /** To a peer's address: the UTC day it was announced for, where it counts against the peer's ceiling. */
  peer_day: Nullable<string>;
  /** From a peer's address: what we last reported to the peer of it (`inbox`, `spam`, `lost`, ...). */
  peer_reported: Nullable<string>;
}
