import { createHash } from 'node:crypto';
import type { AuthenticatedKey } from './auth.js';

export interface AuthenticationCache {
  /** `authenticate`, answered from memory for a key that was valid less than `ttlMs` ago. */
  authenticate(key: string): Promise<AuthenticatedKey | undefined>;
  /** Forgets every key: after a revocation in this process, so it takes effect here at once. */
  clear(): void;
}

/**
 * An in-process cache of API key lookups in front of `authenticate` (the workspaces service's, or
 * whatever checks a presented key). Looking a key up costs a SHA-256 and a query on every request,
 * more than a whole simple route; a valid key is remembered for `ttlMs`, so a key revoked on another
 * replica stops working within that time (in this one at once, through `clear`). Only valid keys
 * are kept, by a digest of the key rather than the key, at most `maxEntries` of them (the oldest
 * go first); a wrong key is always looked up, so the failed-authentication limit still counts it.
 */
export function createAuthenticationCache(
  authenticate: (key: string) => Promise<AuthenticatedKey | undefined>,
  { ttlMs, maxEntries = 10_000, now = Date.now }: { ttlMs: number; maxEntries?: number; now?: () => number },
): AuthenticationCache {
  const entries = new Map<string, { found: AuthenticatedKey; expiresAt: number }>();
  // A fast digest is enough here: the map key only has to differ for different keys; the stored
  // hash comparison stays in `authenticate`.
  const digest = (key: string) => createHash('sha1').update(key).digest('base64');
  return {
    async authenticate(key) {
      const id = digest(key);
      const cached = entries.get(id);
      if (cached && cached.expiresAt > now()) return cached.found;
      entries.delete(id);
      const found = await authenticate(key);
      if (found) {
        if (entries.size >= maxEntries) entries.delete(entries.keys().next().value as string);
        entries.set(id, { found, expiresAt: now() + ttlMs });
      }
      return found;
    },
    clear() {
      entries.clear();
    },
  };
}

/**
 * Whether a successful request may have revoked a key or lowered its role, so the cache must be
 * cleared: revoking or re-issuing a key, and removing or changing the role of a member (whose
 * keys go with them or are capped at their new role).
 */
export function changesKeyAccess(method: string, url: string): boolean {
  const path = url.split('?')[0] ?? '';
  if (method === 'DELETE' && path.startsWith('/api/keys/')) return true;
  if (method === 'POST' && /^\/api\/keys\/[^/]+\/reissue$/.test(path)) return true;
  return (method === 'DELETE' || method === 'PATCH') && path.startsWith('/api/workspace/members/');
}
