import { Type, type Static } from '@sinclair/typebox';
import { KeyRoleSchema } from '../http/access.js';

export const Workspace = Type.Object({
  id: Type.String(),
  name: Type.String(),
  createdAt: Type.String({ format: 'date-time' }),
});
export type Workspace = Static<typeof Workspace>;

/** Where a person's reply to warmup mail is left (engine/owner-mail.ts). */
export const HUMAN_REPLY_CHOICES = ['file', 'inbox'] as const;
const HumanReplyChoice = Type.Unsafe<(typeof HUMAN_REPLY_CHOICES)[number]>({
  type: 'string',
  enum: [...HUMAN_REPLY_CHOICES],
  description:
    'Where a reply a person wrote to warmup mail is left, unread: `file` moves it into the Warmup folder (so warmup never clutters the inbox), `inbox` leaves it where it arrived. Either way it is listed on the mailbox (`GET /api/mailboxes/{id}/replies`) and raises `mailbox.human_reply`.',
});

const OnboardingDismissed = Type.Boolean({
  description:
    "Whether an owner or admin put the overview's onboarding checklist away for everyone in the workspace (`GET /api/workspace/onboarding`)",
});

export const WorkspaceSettings = Type.Object({
  humanReplies: HumanReplyChoice,
  onboardingDismissed: OnboardingDismissed,
});
export type WorkspaceSettings = Static<typeof WorkspaceSettings>;

export const UpdateWorkspaceSettingsBody = Type.Object(
  { humanReplies: Type.Optional(HumanReplyChoice), onboardingDismissed: Type.Optional(OnboardingDismissed) },
  { additionalProperties: false, description: 'The settings to change; the others stay as they are' },
);
export type UpdateWorkspaceSettingsBody = Static<typeof UpdateWorkspaceSettingsBody>;

export const WorkspaceSettingsEnvelope = Type.Object({ settings: WorkspaceSettings });

/** The four things a new workspace does before warmup can do its best, in the order the checklist shows them. */
export const ONBOARDING_STEPS = ['mailboxes', 'dns', 'team', 'alerts'] as const;
export type OnboardingStepId = (typeof ONBOARDING_STEPS)[number];

export const OnboardingStep = Type.Object({
  id: Type.Unsafe<OnboardingStepId>({
    type: 'string',
    enum: [...ONBOARDING_STEPS],
    description:
      '`mailboxes`: mailboxes connected on two or more domains; `dns`: every mailbox checked, with no failing DNS check and no blocklist listing; `team`: a second member or a pending invite; `alerts`: an enabled alert (email, Slack, Teams or webhook)',
  }),
  done: Type.Boolean({ description: "Ticked from the workspace's current state, never by hand" }),
  detail: Type.String({ description: 'Where the step stands, in words: "1 domain so far", "2 failing DNS checks"' }),
});
export type OnboardingStep = Static<typeof OnboardingStep>;

export const Onboarding = Type.Object({
  steps: Type.Array(OnboardingStep),
  complete: Type.Boolean({ description: 'Every step is done' }),
  dismissed: OnboardingDismissed,
});
export type Onboarding = Static<typeof Onboarding>;

export const OnboardingEnvelope = Type.Object({ onboarding: Onboarding });

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
