import { Type, type Static } from '@sinclair/typebox';
import { ROLES, type Role } from './roles.js';

export { ROLES, defaultAccess, hasRole, type Role } from './roles.js';

export const RoleSchema = Type.Union(
  ROLES.map((role) => Type.Literal(role)),
  {
    description:
      '`viewer`: reads everything, changes nothing; `member`: also mailboxes and templates; `admin`: also API keys, webhooks, members and invites; `owner`: also other owners',
  },
);

/** API keys act for scripts, never as an owner. */
export const KEY_ROLES = ['viewer', 'member', 'admin'] as const satisfies readonly Role[];
export const KeyRoleSchema = Type.Union(
  KEY_ROLES.map((role) => Type.Literal(role)),
  { description: 'What the key may do: `viewer`, `member` or `admin` (default `admin`)' },
);
export type KeyRole = Static<typeof KeyRoleSchema>;

/**
 * What a route requires: a role in the current workspace, `signed-in` (a person's session, no
 * workspace role needed: switching workspace, changing one's password), `installation-owner` (the
 * session of the person who set the installation up: what spans every workspace, such as peers),
 * or `public` (first-run setup, sign-in, opening an invite).
 */
export type Access = Role | 'signed-in' | 'installation-owner' | 'public';

export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value);
}
