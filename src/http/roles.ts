// The role table every check of access reads, the API's routes and the dashboard's pages alike;
// apart from access.ts so that the browser bundle takes it without the schema library.

/** What a person or an API key may do in a workspace, weakest first. */
export const ROLES = ['viewer', 'member', 'admin', 'owner'] as const;
export type Role = (typeof ROLES)[number];

/** True when `role` may do what `required` allows. */
export function hasRole(role: Role, required: Role): boolean {
  return ROLES.indexOf(role) >= ROLES.indexOf(required);
}

/** The documented default of a route that declares nothing: reading needs a viewer, changing a member. */
export function defaultAccess(method: string): Role {
  return method === 'GET' || method === 'HEAD' ? 'viewer' : 'member';
}
