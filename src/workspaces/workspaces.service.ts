import type { Kysely } from 'kysely';
import type { AuthenticatedKey } from '../http/auth.js';
import type { Clock } from '../clock.js';
import { inTransaction } from '../db/database.js';
import { newId } from '../db/ids.js';
import type { Database } from '../db/schema.js';
import { ConflictError, NotFoundError } from '../http/errors.js';
import { LimitExceededError } from '../http/limits.js';
import type { Onboarding, UpdateWorkspaceSettingsBody } from './workspaces.schemas.js';
import { onboardingFacts } from './onboarding.repository.js';
import { onboardingSteps } from './onboarding.js';
import { generateApiKey, hashApiKey, keyPrefix, sameHash } from './api-keys.js';
import {
  createWorkspacesRepository,
  type ApiKeyRecord,
  type NewApiKey,
  type WorkspaceRecord,
} from './workspaces.repository.js';
import type { ApiKey, CreatedApiKey } from './workspaces.schemas.js';
import type { KeyRole, Role } from '../http/access.js';

export const DEFAULT_WORKSPACE_ID = 'ws_default';

/** Keys one workspace may hold; a key per person or integration fits well below it. */
export const MAX_API_KEYS_PER_WORKSPACE = 100;

/** last_used_at is written at most this often per key, so authenticating is a read, not a write. */
const LAST_USED_PRECISION_MS = 60_000;

export interface WorkspacesServiceDeps {
  db: Kysely<Database>;
  clock: Clock;
  /** Gives a new workspace its starting content (the default templates), in the same transaction. */
  onWorkspaceCreated: (trx: Kysely<Database>, workspaceId: string) => Promise<void>;
}

function toApiKey(record: ApiKeyRecord, currentKeyId?: string): ApiKey {
  return {
    id: record.id,
    name: record.name,
    prefix: record.prefix,
    origin: record.origin,
    role: record.role,
    createdAt: record.createdAt,
    lastUsedAt: record.lastUsedAt,
    current: record.id === currentKeyId,
    createdBy: record.createdBy,
  };
}

export function createWorkspacesService({ db, clock, onWorkspaceCreated }: WorkspacesServiceDeps) {
  const repository = createWorkspacesRepository(db);

  async function createWorkspace(
    name: string,
    id = newId('ws'),
  ): Promise<{ workspace: WorkspaceRecord; apiKey: string }> {
    const apiKey = generateApiKey();
    const workspace = { id, name, createdAt: clock.now().toISOString() };
    await inTransaction(db, async (trx) => {
      await repository.insertWorkspace(trx, workspace);
      await repository.insertApiKey(trx, {
        id: newId('key'),
        workspaceId: id,
        name: 'default',
        keyHash: hashApiKey(apiKey),
        prefix: keyPrefix(apiKey),
        origin: 'issued',
        role: 'admin',
        createdAt: workspace.createdAt,
        createdBy: null,
      });
      await onWorkspaceCreated(trx, id);
    });
    return { workspace, apiKey };
  }

  async function keyRecord(workspaceId: string, id: string): Promise<ApiKey> {
    const record = (await repository.listApiKeys(workspaceId)).find((key) => key.id === id);
    if (!record) throw new NotFoundError(`API key ${id} not found`);
    return toApiKey(record);
  }

  return {
    createWorkspace,

    /**
     * A workspace with its starting content and no API key, inside the caller's transaction
     * (accounts); `createdBy` is the person who made it, counted against their cap.
     */
    async insertWorkspace(
      trx: Kysely<Database>,
      name: string,
      createdBy: string | null = null,
    ): Promise<WorkspaceRecord> {
      const workspace = { id: newId('ws'), name, createdAt: clock.now().toISOString() };
      await repository.insertWorkspace(trx, workspace, createdBy);
      await onWorkspaceCreated(trx, workspace.id);
      return workspace;
    },

    findWorkspace: (id: string) => repository.findById(id),
    findSettings: (id: string) => repository.findSettings(id),
    async updateSettings(id: string, change: UpdateWorkspaceSettingsBody) {
      await repository.updateSettings(id, change, clock.now().toISOString());
      return repository.findSettings(id);
    },

    /** The overview's checklist, each step ticked from what the workspace holds now; undefined for no workspace. */
    async onboarding(id: string): Promise<Onboarding | undefined> {
      const settings = await repository.findSettings(id);
      if (!settings) return undefined;
      const steps = onboardingSteps(await onboardingFacts(db, id, clock.now().toISOString()));
      return { steps, complete: steps.every((step) => step.done), dismissed: settings.onboardingDismissed };
    },

    /**
     * Makes WARMUP_API_KEY valid for the `default` workspace, creating the workspace on first start,
     * and revokes the bootstrap key of an earlier setting: changing the setting replaces the key.
     */
    async bootstrap(apiKey: string): Promise<{ revokedKeys: number }> {
      const now = clock.now().toISOString();
      const keyHash = hashApiKey(apiKey);
      return inTransaction(db, async (trx) => {
        // Several replicas may start at once on a fresh database: exactly one of them creates it.
        const created = await trx
          .insertInto('workspaces')
          .values({ id: DEFAULT_WORKSPACE_ID, name: 'default', created_at: now })
          .onConflict((oc) => oc.column('id').doNothing())
          .returning('id')
          .executeTakeFirst();
        if (created) await onWorkspaceCreated(trx, DEFAULT_WORKSPACE_ID);
        const revokedKeys = await repository.deleteOtherBootstrapKeys(trx, DEFAULT_WORKSPACE_ID, keyHash);
        await repository.insertApiKey(trx, {
          id: newId('key'),
          workspaceId: DEFAULT_WORKSPACE_ID,
          name: 'bootstrap',
          keyHash,
          prefix: keyPrefix(apiKey),
          origin: 'bootstrap',
          role: 'admin',
          createdAt: now,
          createdBy: null,
        });
        return { revokedKeys };
      });
    },

    /**
     * The workspace and key a presented key belongs to, or undefined. Looked up every time; the app
     * may remember valid answers for WARMUP_AUTH_CACHE_MS (http/auth-cache.ts).
     */
    async authenticate(apiKey: string): Promise<AuthenticatedKey | undefined> {
      const hash = hashApiKey(apiKey);
      const found = await repository.findByKeyHash(hash);
      if (!found || !sameHash(found.keyHash, hash)) return undefined;
      const now = clock.now();
      if (!found.lastUsedAt || now.getTime() - Date.parse(found.lastUsedAt) >= LAST_USED_PRECISION_MS) {
        await repository.touchApiKey(found.id, now.toISOString());
      }
      return { workspaceId: found.workspaceId, keyId: found.id, role: found.role, createdBy: found.createdBy };
    },

    /** The workspace's keys, oldest first; `current` marks `currentKeyId`. Never the keys themselves. */
    async listApiKeys(workspaceId: string, currentKeyId?: string): Promise<ApiKey[]> {
      return (await repository.listApiKeys(workspaceId)).map((record) => toApiKey(record, currentKeyId));
    },

    /**
     * A new key for the workspace; the plain key is returned this once and stored only as a hash.
     * `createdBy` is the person making it (for a key made with a key, that key's maker).
     */
    async createApiKey(
      workspaceId: string,
      name: string,
      role: KeyRole = 'admin',
      createdBy: string | null = null,
    ): Promise<CreatedApiKey> {
      const existing = await repository.listApiKeys(workspaceId);
      if (existing.length >= MAX_API_KEYS_PER_WORKSPACE) {
        throw new LimitExceededError(
          409,
          'key_limit_reached',
          `a workspace holds at most ${MAX_API_KEYS_PER_WORKSPACE} API keys; revoke one first`,
        );
      }
      const apiKey = generateApiKey();
      const key: NewApiKey = {
        id: newId('key'),
        workspaceId,
        name: name.trim(),
        keyHash: hashApiKey(apiKey),
        prefix: keyPrefix(apiKey),
        origin: 'issued',
        role,
        createdAt: clock.now().toISOString(),
        createdBy,
      };
      await inTransaction(db, (trx) => repository.insertApiKey(trx, key));
      return { key: await keyRecord(workspaceId, key.id), apiKey };
    },

    /**
     * A key made again under the same name and role with a new secret, made by `createdBy`: the old
     * secret stops working at once. Keeps an integration running when the person who made its key
     * leaves: re-issued by whoever stays, it is no longer revoked with its old maker.
     */
    async reissueApiKey(workspaceId: string, id: string, createdBy: string | null): Promise<CreatedApiKey> {
      const apiKey = generateApiKey();
      const newKeyId = newId('key');
      await inTransaction(db, async (trx) => {
        const old = (await repository.listApiKeys(workspaceId, trx)).find((key) => key.id === id);
        if (!old) throw new NotFoundError(`API key ${id} not found`);
        await repository.deleteApiKey(trx, workspaceId, id);
        await repository.insertApiKey(trx, {
          id: newKeyId,
          workspaceId,
          name: old.name,
          keyHash: hashApiKey(apiKey),
          prefix: keyPrefix(apiKey),
          origin: 'issued',
          role: old.role,
          createdAt: clock.now().toISOString(),
          createdBy,
        });
      });
      return { key: await keyRecord(workspaceId, newKeyId), apiKey };
    },

    /** The keys a person made in the workspace: what removing them revokes. */
    async listKeysMadeBy(workspaceId: string, userId: string): Promise<ApiKey[]> {
      return (await repository.listApiKeys(workspaceId, db, userId)).map((record) => toApiKey(record));
    },

    /** Inside the caller's transaction (accounts): revokes the keys the person made in the workspace. */
    revokeKeysMadeBy: (trx: Kysely<Database>, workspaceId: string, userId: string) =>
      repository.deleteKeysMadeBy(trx, workspaceId, userId),

    /** Inside the caller's transaction (accounts): a demotion caps the keys the person made at `role`. */
    capKeysMadeBy: (trx: Kysely<Database>, workspaceId: string, userId: string, role: Role) =>
      repository.capKeysMadeBy(trx, workspaceId, userId, role),

    /**
     * Deletes a key: the next request with it, on any replica, is a 401. The last key of a workspace
     * nobody can sign in to is kept, so the workspace stays reachable.
     */
    async revokeApiKey(workspaceId: string, id: string): Promise<void> {
      await inTransaction(db, async (trx) => {
        const keys = await repository.listApiKeys(workspaceId, trx);
        if (!keys.some((key) => key.id === id)) throw new NotFoundError(`API key ${id} not found`);
        if (keys.length === 1 && !(await repository.hasMembers(trx, workspaceId))) {
          throw new ConflictError(
            'the last API key of a workspace without members cannot be revoked; create another key first',
          );
        }
        await repository.deleteApiKey(trx, workspaceId, id);
      });
    },
  };
}

export type WorkspacesService = ReturnType<typeof createWorkspacesService>;
