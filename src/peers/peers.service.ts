import { createHash, createPrivateKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { Value } from '@sinclair/typebox/value';
import type { Kysely } from 'kysely';
import type { Clock } from '../clock.js';
import type { Database } from '../db/schema.js';
import { newId } from '../db/ids.js';
import { AppError, ConflictError, ForbiddenError, NotFoundError, ValidationError } from '../http/errors.js';
import { DEFAULT_MAIL_POLICY, isInternalAddress, matchesHostList, type MailPolicy } from '../mail/policy.js';
import { isIP } from 'node:net';
import { decryptSecret, encryptSecret } from '../secrets/secrets.js';
import {
  contentDigest,
  parseSignature,
  parseSignatureInput,
  publicKeyFromText,
  rawPublicKey,
  SignatureError,
  verifyMessage,
} from './http-signatures.js';
import { callPeer, PeerCallError, type PeerAnswer, type PeerCall } from './peer-client.js';
import { pauseStandIns, peerFlows } from './peer-mail.repository.js';
import {
  findIdentity,
  findPeer,
  findPeerByKey,
  insertIdentity,
  insertPeer,
  listPeers,
  moveState,
  offeredMailboxes,
  recordHandshakeFailure,
  rememberNonce,
  reviveRemovedPeer,
  type PeerRow,
} from './peers.repository.js';
import {
  OfferAnswer,
  type CreatePeerBody,
  type HelloAnswer,
  type HelloBody,
  type OfferedMailbox,
  type Peer,
  type PeerIdentity,
} from './peers.schemas.js';

/** How far a signature's `created` may lie ahead of our clock (the peers' clocks differ a little). */
export const CLOCK_SKEW_S = 30;
/** The oldest `created` accepted, and the longest lifetime a signature may claim. */
export const MAX_SIGNATURE_AGE_S = 300;
/** Covered by every signed request of the protocol. */
export const REQUIRED_COMPONENTS = ['@method', '@target-uri', 'content-digest'] as const;

const IDENTITY_CONTEXT = 'peer_identity';
const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

export interface PeersServiceDeps {
  db: Kysely<Database>;
  clock: Clock;
  secretKey: Buffer;
  /** The operator's rules for hosts a tenant names; a peer's host is checked against them too. */
  mailPolicy?: MailPolicy;
  /** WARMUP_PUBLIC_URL: where peers reach this installation; peering is off without it. */
  publicUrl?: string | undefined;
  /** Tests only: a peer on loopback over plain http (two installations on one machine). */
  allowPlainLoopback?: boolean;
  /** How long a call to a peer may take (default 10 s). */
  timeoutMs?: number;
}

/** What a signed request to /peer/v1 carries, as the route received it. */
export interface PeerRequest {
  method: string;
  /** The path and query as received (request.url). */
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** What one pass of the `peerHandshakes` job did. */
export interface PeerHandshakeSummary {
  /** Pending peers greeted again. */
  greeted: number;
  /** Of them, the ones that turned active. */
  activated: number;
}

/** Pending peers greeted in one pass at most; the rest wait for the next. */
export const HANDSHAKES_PER_PASS = 50;

export function fingerprintOf(publicKey: string): string {
  const hex = createHash('sha256').update(Buffer.from(publicKey, 'base64url')).digest('hex').slice(0, 16);
  return hex.match(/.{4}/g)!.join('-');
}

/** The days over which the Peers page shows what flowed each way. */
export const FLOW_DAYS = 7;

function toPeer(row: PeerRow, flows: Peer['flows']): Peer {
  return {
    id: row.id,
    url: row.url,
    publicKey: row.public_key,
    fingerprint: fingerprintOf(row.public_key),
    state: row.state,
    offer: {
      domains: JSON.parse(row.offer_domains) as string[],
      mailboxes: row.offer_mailboxes,
      dailyCeiling: row.daily_ceiling,
    },
    handshakeAt: row.handshake_at,
    lastError: row.last_error,
    pausedReason: row.paused_reason,
    flows,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function refused(error: SignatureError): AppError {
  return new AppError(401, error.code, error.message, undefined, { 'WWW-Authenticate': 'Signature' });
}

function headerOf(headers: PeerRequest['headers'], name: string): string | undefined {
  const value = headers[name];
  // a repeated header is two signatures or two digests: neither is this protocol
  if (Array.isArray(value)) return value.length === 1 ? value[0] : `${value.join(', ')}, `;
  return value;
}

export function createPeersService({
  db,
  clock,
  secretKey,
  mailPolicy = DEFAULT_MAIL_POLICY,
  publicUrl,
  allowPlainLoopback = false,
  timeoutMs = 10_000,
}: PeersServiceDeps) {
  let identity: { publicKey: string; privateKey: KeyObject } | undefined;
  const policy: MailPolicy = allowPlainLoopback
    ? { ...mailPolicy, allowedHosts: [...mailPolicy.allowedHosts, '127.0.0.1', '::1'] }
    : mailPolicy;

  /** The installation's key pair, made and stored (encrypted) on first use; the first process to store it wins. */
  async function ownIdentity(): Promise<{ publicKey: string; privateKey: KeyObject }> {
    if (identity) return identity;
    let row = await findIdentity(db);
    if (!row) {
      const { privateKey } = generateKeyPairSync('ed25519');
      const pkcs8 = privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64');
      await insertIdentity(db, {
        id: 1,
        public_key: rawPublicKey(privateKey).toString('base64url'),
        private_key: encryptSecret(secretKey, pkcs8, IDENTITY_CONTEXT),
        created_at: clock.now().toISOString(),
      });
      row = (await findIdentity(db))!;
    }
    const privateKey = createPrivateKey({
      key: Buffer.from(decryptSecret(secretKey, row.private_key, IDENTITY_CONTEXT), 'base64'),
      format: 'der',
      type: 'pkcs8',
    });
    if (rawPublicKey(privateKey).toString('base64url') !== row.public_key)
      throw new Error('the stored peer identity is damaged: its public key is not its private key');
    identity = { publicKey: row.public_key, privateKey };
    return identity;
  }

  function ownOrigin(): string {
    if (!publicUrl)
      throw new AppError(
        409,
        'peering_not_configured',
        'peering needs WARMUP_PUBLIC_URL: the address other installations reach this one at',
      );
    return new URL(publicUrl).origin;
  }

  /** A peer's base URL as stored: an origin, https, never an internal address unless allowed. */
  function checkPeerUrl(text: string): string {
    const bad = (message: string) => ValidationError.field('/body/url', message);
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw bad('is not a URL');
    }
    if (url.username || url.password) throw bad('must not carry a user name or password');
    if (url.search || url.hash || (url.pathname !== '/' && url.pathname !== ''))
      throw bad("must be the installation's origin alone (https://host[:port]), with no path, query or fragment");
    const loopback = LOOPBACK_HOSTS.has(url.hostname);
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback && allowPlainLoopback))
      throw bad('must use https');
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (isIP(host) !== 0 && isInternalAddress(host) && !matchesHostList(policy.allowedHosts, host, host))
      throw bad('names an address of a private network; a peer must be reachable over the internet');
    return url.origin;
  }

  /** A peer as the owner sees it: its terms and state, and what flowed each way lately. */
  async function view(row: PeerRow): Promise<Peer> {
    const since = new Date(clock.now().getTime() - FLOW_DAYS * 86_400_000).toISOString();
    return toPeer(row, await peerFlows(db, row.id, since));
  }

  async function peerOrFail(id: string): Promise<PeerRow> {
    const row = await findPeer(db, id);
    if (!row || row.state === 'removed') throw new NotFoundError(`no peer ${id}`);
    return row;
  }

  /** Our signed hello; a 200 from the peer means it has added us too, so both sides are active. */
  async function handshake(row: PeerRow): Promise<PeerRow> {
    const now = () => clock.now().toISOString();
    try {
      const { privateKey, publicKey } = await ownIdentity();
      const answer = await callPeer(
        { method: 'POST', url: `${row.url}/peer/v1/hello`, body: { url: ownOrigin() } satisfies HelloBody },
        { identity: { keyId: publicKey, privateKey }, policy, timeoutMs, nowMs: clock.now().getTime() },
      );
      if (answer.status === 200 && (answer.json as HelloAnswer | null)?.state === 'active') {
        const at = now();
        await moveState(db, row.id, ['pending', 'active'], 'active', at, { handshake_at: at, last_error: null });
      } else {
        const code = (answer.json as { code?: unknown } | null)?.code;
        const named = typeof code === 'string' && /^[a-z_]{1,40}$/.test(code) ? ` (${code})` : '';
        await recordHandshakeFailure(db, row.id, `the peer answered ${answer.status}${named}`, now());
      }
    } catch (error) {
      if (!(error instanceof PeerCallError)) throw error;
      await recordHandshakeFailure(db, row.id, error.message, now());
    }
    return (await findPeer(db, row.id))!;
  }

  return {
    /** The installation's public key and its fingerprint, made on first use. */
    async identity(): Promise<PeerIdentity> {
      const { publicKey } = await ownIdentity();
      return { publicKey, fingerprint: fingerprintOf(publicKey) };
    },

    async list(): Promise<Peer[]> {
      return Promise.all((await listPeers(db)).map(view));
    },

    /** Adds a peer (pending) and says hello at once; it turns active when the peer has added us too. */
    async add(body: CreatePeerBody): Promise<Peer> {
      ownOrigin();
      const url = checkPeerUrl(body.url);
      if (!publicKeyFromText(body.publicKey))
        throw ValidationError.field('/body/publicKey', 'is not an Ed25519 public key');
      if (body.publicKey === (await ownIdentity()).publicKey)
        throw ValidationError.field('/body/publicKey', "is this installation's own key");
      const at = clock.now().toISOString();
      const terms = {
        url,
        offer_domains: JSON.stringify(body.offer.domains),
        offer_mailboxes: body.offer.mailboxes,
        daily_ceiling: body.offer.dailyCeiling,
        updated_at: at,
      };
      const existing = await findPeerByKey(db, body.publicKey);
      let id: string;
      if (existing) {
        if (!(await reviveRemovedPeer(db, existing.id, terms)))
          throw new ConflictError(`this key is peer ${existing.id} already`, [
            { path: '/body/publicKey', message: 'is a peer already' },
          ]);
        id = existing.id;
      } else {
        id = newId('peer', clock.now().getTime());
        try {
          await insertPeer(db, {
            id,
            public_key: body.publicKey,
            state: 'pending',
            handshake_at: null,
            last_error: null,
            created_at: at,
            ...terms,
          });
        } catch (error) {
          if (await findPeerByKey(db, body.publicKey))
            throw new ConflictError('this key was added by another request just now', [
              { path: '/body/publicKey', message: 'is a peer already' },
            ]);
          throw error;
        }
      }
      return view(await handshake((await findPeer(db, id))!));
    },

    /**
     * Greets the pending peers again (the `peerHandshakes` job): a hello that failed because the
     * peer was unreachable when the second side added the first would otherwise leave both
     * sides pending until an operator resumed one.
     */
    async greetPending(): Promise<PeerHandshakeSummary> {
      if (!publicUrl) return { greeted: 0, activated: 0 };
      const pending = (await listPeers(db)).filter((row) => row.state === 'pending').slice(0, HANDSHAKES_PER_PASS);
      let activated = 0;
      for (const row of pending) if ((await handshake(row)).state === 'active') activated += 1;
      return { greeted: pending.length, activated };
    },

    /** Refuses the peer's requests from now on; resuming asks it again. */
    async pause(id: string): Promise<Peer> {
      const row = await peerOrFail(id);
      const at = clock.now().toISOString();
      if (row.state !== 'paused') await moveState(db, id, ['pending', 'active'], 'paused', at);
      await pauseStandIns(db, id, at);
      return view(await peerOrFail(id));
    },

    /**
     * Pauses a peer on this installation's own judgement (over its ceiling, junk evidence), with
     * the reason shown to the operator; its mail stops at once. False when it was not active.
     */
    async pauseAutomatically(id: string, reason: string): Promise<boolean> {
      const at = clock.now().toISOString();
      const paused = await moveState(db, id, ['pending', 'active'], 'paused', at, { paused_reason: reason });
      await pauseStandIns(db, id, at);
      return paused;
    },

    /** A signed call to an active peer; a failure to reach it is a PeerCallError. */
    async call(row: PeerRow, call: PeerCall): Promise<PeerAnswer> {
      const { privateKey, publicKey } = await ownIdentity();
      return callPeer(
        { ...call, url: `${row.url}${call.url}` },
        { identity: { keyId: publicKey, privateKey }, policy, timeoutMs, nowMs: clock.now().getTime() },
      );
    },

    /** Notes why talking to the peer failed, for the operator (the Peers page, doctor). */
    async noteFailure(id: string, reason: string): Promise<void> {
      await recordHandshakeFailure(db, id, reason, clock.now().toISOString());
    },

    async resume(id: string): Promise<Peer> {
      const row = await peerOrFail(id);
      if (row.state !== 'paused') return view(row);
      await moveState(db, id, ['paused'], 'pending', clock.now().toISOString(), { paused_reason: null });
      return view(await handshake((await findPeer(db, id))!));
    },

    /** Ends the peering at once; the row stays so its key is known as removed (added again: pending). */
    async remove(id: string): Promise<void> {
      await peerOrFail(id);
      const at = clock.now().toISOString();
      await moveState(db, id, ['pending', 'active', 'paused'], 'removed', at);
      await pauseStandIns(db, id, at);
    },

    /**
     * The peer a signed request comes from, or a problem: unsigned, malformed, missing a covered
     * component, too old or too new, an unknown key, a body that is not its digest, a bad
     * signature, a paused or removed peer, or a nonce seen before. Nothing is written but the
     * nonce of a request that passed every other check.
     */
    async authenticate(request: PeerRequest): Promise<PeerRow> {
      try {
        const inputHeader = headerOf(request.headers, 'signature-input');
        const signatureHeader = headerOf(request.headers, 'signature');
        if (inputHeader === undefined || signatureHeader === undefined)
          throw new SignatureError('signature_required', 'sign the request (RFC 9421): Signature-Input and Signature');
        const origin = ownOrigin();
        const input = parseSignatureInput(inputHeader);
        for (const component of REQUIRED_COMPONENTS)
          if (!input.components.includes(component))
            throw new SignatureError('signature_malformed', `the signature must cover ${component}`);
        const params = new Map(input.params);
        const created = params.get('created');
        const expires = params.get('expires');
        const nonce = params.get('nonce');
        const keyId = params.get('keyid');
        if (typeof created !== 'number' || typeof expires !== 'number')
          throw new SignatureError('signature_malformed', 'the signature must state created and expires');
        if (typeof nonce !== 'string' || !/^[A-Za-z0-9_-]{16,64}$/.test(nonce))
          throw new SignatureError(
            'signature_malformed',
            'the signature must carry a nonce of 16 to 64 base64url characters',
          );
        if (params.get('alg') !== 'ed25519')
          throw new SignatureError('signature_malformed', 'the signature must state alg="ed25519"');
        if (typeof keyId !== 'string')
          throw new SignatureError('signature_malformed', 'the signature must name its keyid');
        const signature = parseSignature(signatureHeader, input.label);

        const nowS = Math.floor(clock.now().getTime() / 1000);
        if (created > nowS + CLOCK_SKEW_S || created < nowS - MAX_SIGNATURE_AGE_S)
          throw new SignatureError('signature_expired', 'the signature was not made just now (check the clock)');
        if (expires <= nowS || expires <= created || expires - created > MAX_SIGNATURE_AGE_S)
          throw new SignatureError('signature_expired', 'the signature has expired');

        const peer = await findPeerByKey(db, keyId);
        const publicKey = peer ? publicKeyFromText(peer.public_key) : undefined;
        if (!peer || !publicKey) throw new SignatureError('unknown_key', 'this installation has not added that key');
        const digest = headerOf(request.headers, 'content-digest');
        if (digest !== contentDigest(request.body))
          throw new SignatureError('signature_invalid', 'Content-Digest is not the sha-256 of the body');
        const message = {
          method: request.method,
          targetUri: `${origin}${request.url}`,
          headers: { 'content-digest': digest },
        };
        if (!verifyMessage(message, input, signature, publicKey))
          throw new SignatureError('signature_invalid', 'the signature does not verify with the key it names');

        if (peer.state === 'removed')
          throw new ForbiddenError('this installation has ended the peering', 'peer_removed');
        if (peer.state === 'paused')
          throw new ForbiddenError('this installation has paused the peering', 'peer_paused');
        const forgetAt = new Date(Math.max(expires, created + MAX_SIGNATURE_AGE_S + CLOCK_SKEW_S) * 1000);
        if (!(await rememberNonce(db, keyId, nonce, forgetAt.toISOString(), clock.now().toISOString())))
          throw new SignatureError('signature_replayed', 'this signed request was received before');
        return peer;
      } catch (error) {
        throw error instanceof SignatureError ? refused(error) : error;
      }
    },

    /** The caller's hello: it has added us; if we have added it, the peering is active on our side. */
    async hello(peer: PeerRow, body: HelloBody): Promise<HelloAnswer> {
      let origin: string | undefined;
      try {
        origin = new URL(body.url).origin;
      } catch {
        origin = undefined;
      }
      if (origin !== peer.url)
        throw new ForbiddenError('this installation added the key under another URL', 'peer_url_mismatch');
      const at = clock.now().toISOString();
      await moveState(db, peer.id, ['pending', 'active'], 'active', at, { handshake_at: at, last_error: null });
      return { state: 'active' };
    },

    /** What we offer an active peer: the participating addresses and their volumes, nothing else. */
    async offerFor(peer: PeerRow): Promise<OfferAnswer> {
      if (peer.state !== 'active')
        throw new ForbiddenError('the peering is not active on this side yet: say hello first', 'peer_pending');
      const rows = await offeredMailboxes(db, JSON.parse(peer.offer_domains) as string[], peer.offer_mailboxes);
      const mailboxes: OfferedMailbox[] = rows.map((row) => {
        const warmup = JSON.parse(row.warmup) as {
          dailyLimit: number;
          sendWindow: { start: string; end: string };
          timezone: string;
          weekdaysOnly: boolean;
        };
        return {
          address: row.email,
          dailyVolume: warmup.dailyLimit,
          window: { start: warmup.sendWindow.start, end: warmup.sendWindow.end },
          timezone: warmup.timezone,
          weekdaysOnly: warmup.weekdaysOnly,
        };
      });
      return { mailboxes, dailyCeiling: peer.daily_ceiling };
    },

    /** Asks an active peer what it offers us; its answer is checked against the protocol's schema. */
    async fetchOffer(id: string): Promise<OfferAnswer> {
      const row = await peerOrFail(id);
      if (row.state !== 'active') throw new ConflictError(`peer ${id} is ${row.state}, not active`);
      const { privateKey, publicKey } = await ownIdentity();
      let answer;
      try {
        answer = await callPeer(
          { method: 'GET', url: `${row.url}/peer/v1/offer` },
          { identity: { keyId: publicKey, privateKey }, policy, timeoutMs, nowMs: clock.now().getTime() },
        );
      } catch (error) {
        if (error instanceof PeerCallError) throw new AppError(502, 'peer_unreachable', error.message);
        throw error;
      }
      if (answer.status !== 200) throw new AppError(502, 'peer_refused', `the peer answered ${answer.status}`);
      if (!Value.Check(OfferAnswer, answer.json))
        throw new AppError(502, 'peer_answer_invalid', "the peer's offer is not in the protocol's form");
      return answer.json;
    },
  };
}

export type PeersService = ReturnType<typeof createPeersService>;
