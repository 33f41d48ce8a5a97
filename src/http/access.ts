import { Type, type Static } from '@sinclair/typebox';

/** What a person or an API key may do in a workspace, weakest first. */
export const ROLES = ['viewer', 'member', 'admin', 'owner'] as const;

export const RoleSchema = Type.Union(
  ROLES.map((role) => Type.Literal(role)),
  {
    description:
      '`viewer`: reads everything, changes nothing; `member`: also mailboxes and templates; `admin`: also API keys, webhooks, members and invites; `owner`: also other owners',
  },
);
export type Role = Static<typeof RoleSchema>;

/** API keys act for scripts, never as an owner. */
export const KEY_ROLES = ['viewer', 'member', 'admin'] as const satisfies readonly Role[];
export const KeyRoleSchema = Type.Union(
  KEY_ROLES.map((role) => Type.Literal(role)),
  { description: 'What the key may do: `viewer`, `member` or `admin` (default `admin`)' },
);
export type KeyRole = Static<typeof KeyRoleSchema>;

/**
 * What a route requires: a role in the current workspace, `signed-in` (a person's session, no
 * workspace role needed: switching workspace, changing one's password), or `public` (first-run
 * setup, sign-in, opening an invite).
 */
export type Access = Role | 'signed-in' | 'public';

export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value);
}

/** True when `role` may do what `required` allows. */
export function hasRole(role: Role, required: Role): boolean {
  return ROLES.indexOf(role) >= ROLES.indexOf(required);
}

/** The documented default of a route that declares nothing: reading needs a viewer, changing a member. */
export function defaultAccess(method: string): Role {
  return method === 'GET' || method === 'HEAD' ? 'viewer' : 'member';
}
