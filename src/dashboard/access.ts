// What the signed-in person (or API key) may do here, for hiding what the API would refuse anyway.
// The roles and their order are the API's own table (http/roles.ts); ACTION_ROLES names, for each
// kind of thing the dashboard offers, the least role the API asks for it.
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import { ROLES, defaultAccess, hasRole, type Role } from '../http/roles.js';

export const ACTION_ROLES = {
  /** Adding, changing and deleting mailboxes, templates and placement tests: the API's default for any change. */
  change: defaultAccess('POST'),
  /** API keys, webhooks, members and invites (their routes declare `admin`). */
  manage: 'admin',
} as const satisfies Record<string, Role>;
export type Action = keyof typeof ACTION_ROLES;

export const RoleContext = createContext<Role>('viewer');

export function atLeast(role: Role, required: Role): boolean {
  return hasRole(role, required);
}

export function can(role: Role, action: Action): boolean {
  return hasRole(role, ACTION_ROLES[action]);
}

/** The roles that may take `action`, as a sentence says them: "members, admins and owners". */
export function rolesThatCan(action: Action): string {
  const names = ROLES.filter((role) => can(role, action)).map((role) => `${role}s`);
  return names.length === 1 ? names[0]! : `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`;
}

export function useCan(action: Action): boolean {
  return can(useContext(RoleContext), action);
}

/** Members and above change mailboxes and templates. */
export function useCanEdit(): boolean {
  return useCan('change');
}

/** Admins and owners manage keys, webhooks, members and invites. */
export function useIsAdmin(): boolean {
  return useCan('manage');
}

export function useRole(): Role {
  return useContext(RoleContext);
}
