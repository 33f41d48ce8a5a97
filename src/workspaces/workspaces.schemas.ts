import { Type, type Static } from '@sinclair/typebox';
import { KeyRoleSchema } from '../http/access.js';

export const Workspace = Type.Object({
  id: Type.String(),
  name: Type.String(),
  createdAt: Type.String({ format: 'date-time' }),
});
export type Workspace = Static<typeof Workspace>;

/** The person who made a key or an invite; null when nobody recorded one (bootstrap, CLI, older entries). */
export const MadeBy = Type.Union(
  [Type.Object({ id: Type.String(), name: Type.String(), email: Type.String() }), Type.Null()],
  {
    description:
      'Who made it: removing that person from the workspace revokes it, demoting them caps it at their new role; null for the bootstrap key, keys made by the CLI and entries older than this field',
  },
);
export type MadeBy = Static<typeof MadeBy>;

export const ApiKey = Type.Object({
  id: Type.String(),
  name: Type.String(),
  prefix: Type.Union([Type.String(), Type.Null()], {
    description: 'The first characters of the key, to recognise it by (null for keys made before prefixes were kept)',
  }),
  origin: Type.Union([Type.Literal('bootstrap'), Type.Literal('issued')], {
    description: '`bootstrap`: made from WARMUP_API_KEY, replaced when that setting changes',
  }),
  role: KeyRoleSchema,
  createdAt: Type.String({ format: 'date-time' }),
  lastUsedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'Updated at most once a minute',
  }),
  current: Type.Boolean({ description: 'True for the key that made this request' }),
  createdBy: MadeBy,
});
export type ApiKey = Static<typeof ApiKey>;

export const ApiKeyList = Type.Object({ keys: Type.Array(ApiKey) });
export type ApiKeyList = Static<typeof ApiKeyList>;

export const CreateApiKeyBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100, pattern: '\\S', description: 'What the key is for; not blank' }),
    role: Type.Optional(KeyRoleSchema),
  },
  { additionalProperties: false },
);
export type CreateApiKeyBody = Static<typeof CreateApiKeyBody>;

export const CreatedApiKey = Type.Object({
  key: ApiKey,
  apiKey: Type.String({ description: 'The key itself, shown this once and never again' }),
});
export type CreatedApiKey = Static<typeof CreatedApiKey>;
