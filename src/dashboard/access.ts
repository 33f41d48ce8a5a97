// What the signed-in person (or API key) may do here, for hiding what the API would refuse anyway:
// a viewer sees no edit buttons, only admins see webhooks and the team.
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Role } from './api.js';

const RANK: Record<Role, number> = { viewer: 0, member: 1, admin: 2, owner: 3 };

export const RoleContext = createContext<Role>('viewer');

export function atLeast(role: Role, required: Role): boolean {
  return RANK[role] >= RANK[required];
}

/** Members and above change mailboxes and templates. */
export function useCanEdit(): boolean {
  return atLeast(useContext(RoleContext), 'member');
}

/** Admins and owners manage keys, webhooks, members and invites. */
export function useIsAdmin(): boolean {
  return atLeast(useContext(RoleContext), 'admin');
}

export function useRole(): Role {
  return useContext(RoleContext);
}
