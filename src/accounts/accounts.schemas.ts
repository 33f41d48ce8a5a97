import { Type, type Static } from '@sinclair/typebox';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from './passwords.js';
import { RoleSchema } from '../http/access.js';
import { ApiKey, MadeBy } from '../workspaces/workspaces.schemas.js';

const Email = Type.String({
  minLength: 3,
  maxLength: 254,
  pattern: '^[^\\s@]+@[^\\s@]+$',
  description: 'Email address; one account per address, compared case-insensitively',
});
const Password = Type.String({ maxLength: MAX_PASSWORD_LENGTH, description: 'The password' });
const NewPassword = Type.String({
  minLength: MIN_PASSWORD_LENGTH,
  maxLength: MAX_PASSWORD_LENGTH,
  description: `At least ${MIN_PASSWORD_LENGTH} characters`,
});
const PersonName = Type.String({
  minLength: 1,
  maxLength: 100,
  pattern: '\\S',
  description: 'Name shown to teammates',
});
const WorkspaceName = Type.String({ minLength: 1, maxLength: 100, pattern: '\\S', description: 'Workspace name' });

export const SetupStatus = Type.Object({
  setupRequired: Type.Boolean({ description: 'True until the first owner exists' }),
  setupTokenRequired: Type.Boolean({
    description:
      'True when setting up needs the setup token the server printed in its log (it listens on a non-loopback address, or behind a proxy)',
  }),
});
export type SetupStatus = Static<typeof SetupStatus>;

export const SetupBody = Type.Object(
  {
    name: PersonName,
    email: Email,
    password: NewPassword,
    workspaceName: WorkspaceName,
    setupToken: Type.Optional(
      Type.String({
        maxLength: 100,
        description:
          'The setup token from the server log, when `setupTokenRequired` (403 `setup_token_invalid` otherwise)',
      }),
    ),
  },
  { additionalProperties: false },
);
export type SetupBody = Static<typeof SetupBody>;

export const SignInBody = Type.Object(
  {
    email: Email,
    password: Password,
    workspaceId: Type.Optional(
      Type.String({ maxLength: 100, description: 'The workspace to open (default: the first by name)' }),
    ),
  },
  { additionalProperties: false },
);
export type SignInBody = Static<typeof SignInBody>;

export const SessionWorkspace = Type.Object({ id: Type.String(), name: Type.String(), role: RoleSchema });

export const SessionInfo = Type.Object({
  user: Type.Object({ id: Type.String(), email: Type.String(), name: Type.String() }),
  workspace: Type.Union([Type.Object({ id: Type.String(), name: Type.String() }), Type.Null()], {
    description: 'The workspace the session works in; null when the user belongs to none',
  }),
  role: Type.Union([RoleSchema, Type.Null()]),
  workspaces: Type.Array(SessionWorkspace, { description: "Every workspace of the user, with the user's role" }),
  csrfToken: Type.String({
    description: 'Send it as `X-CSRF-Token` with every state-changing request this session cookie authenticates',
  }),
  expiresAt: Type.String({ format: 'date-time' }),
});
export type SessionInfo = Static<typeof SessionInfo>;

export const SwitchWorkspaceBody = Type.Object(
  { workspaceId: Type.String({ minLength: 1, maxLength: 100 }) },
  { additionalProperties: false },
);

export const ChangePasswordBody = Type.Object(
  { currentPassword: Password, newPassword: NewPassword },
  { additionalProperties: false },
);

export const CreateWorkspaceBody = Type.Object({ name: WorkspaceName }, { additionalProperties: false });

export const Member = Type.Object({
  userId: Type.String(),
  email: Type.String(),
  name: Type.String(),
  role: RoleSchema,
  joinedAt: Type.String({ format: 'date-time' }),
});
export type Member = Static<typeof Member>;

export const MemberList = Type.Object({ members: Type.Array(Member) });

export const UserIdParams = Type.Object(
  { userId: Type.String({ minLength: 1, maxLength: 100 }) },
  { additionalProperties: false },
);

export const UpdateMemberBody = Type.Object({ role: RoleSchema }, { additionalProperties: false });

export const Invite = Type.Object({
  id: Type.String(),
  role: RoleSchema,
  email: Type.Union([Type.String(), Type.Null()], { description: 'Who the invite is meant for, as written' }),
  createdAt: Type.String({ format: 'date-time' }),
  expiresAt: Type.String({ format: 'date-time' }),
  createdBy: MadeBy,
});
export type Invite = Static<typeof Invite>;

export const InviteList = Type.Object({ invites: Type.Array(Invite) });

export const MemberAccess = Type.Object({
  keys: Type.Array(ApiKey, { description: 'The API keys the member made here: removing them revokes these' }),
  invites: Type.Array(Invite, { description: 'The open invites the member made here: removing them revokes these' }),
});
export type MemberAccess = Static<typeof MemberAccess>;

export const CreateInviteBody = Type.Object(
  {
    role: RoleSchema,
    email: Type.Optional(Email),
    expiresInDays: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 30, default: 7, description: 'Days until the link stops working' }),
    ),
  },
  { additionalProperties: false },
);
export type CreateInviteBody = Static<typeof CreateInviteBody>;

export const CreatedInvite = Type.Object({
  invite: Invite,
  token: Type.String({ description: 'The link token, shown this once; only its hash is stored' }),
  path: Type.String({ description: 'The dashboard page that accepts it: `/invite/<token>`' }),
});
export type CreatedInvite = Static<typeof CreatedInvite>;

export const InviteTokenParams = Type.Object(
  { token: Type.String({ minLength: 20, maxLength: 100, pattern: '^[A-Za-z0-9_-]+$' }) },
  { additionalProperties: false },
);

export const InvitePreview = Type.Object({
  workspace: Type.Object({ name: Type.String() }),
  role: RoleSchema,
  email: Type.Union([Type.String(), Type.Null()]),
  expiresAt: Type.String({ format: 'date-time' }),
});
export type InvitePreview = Static<typeof InvitePreview>;

export const AcceptInviteBody = Type.Object(
  {
    email: Email,
    password: Password,
    name: Type.Optional(PersonName),
  },
  {
    additionalProperties: false,
    description:
      'An existing account signs in with its password; a new account needs a name and a password of at least 10 characters',
  },
);
