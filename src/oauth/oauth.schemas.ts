import { Type, type Static } from '@sinclair/typebox';
import { OmittableBody } from '../http/common.schemas.js';

export const OAUTH_PROVIDERS = ['google', 'microsoft', 'generic'] as const;
export type OAuthProviderId = (typeof OAUTH_PROVIDERS)[number];

export const OAuthProviderParams = Type.Object(
  {
    provider: Type.Unsafe<OAuthProviderId>({
      type: 'string',
      enum: [...OAUTH_PROVIDERS],
      description: '`google` (Gmail, Google Workspace), `microsoft` (Microsoft 365, Outlook.com) or `generic`',
    }),
  },
  { additionalProperties: false },
);

export const AuthorizeBody = OmittableBody(
  Type.Object(
    {
      mailboxId: Type.Optional(
        Type.String({
          minLength: 1,
          maxLength: 100,
          description:
            'Reconnect this mailbox (after its access was revoked or expired): its history stays, and the account signed in to must be its address',
        }),
      ),
      loginHint: Type.Optional(
        Type.String({
          format: 'email',
          maxLength: 254,
          description: 'The address to sign in with, filled in on the consent page',
        }),
      ),
    },
    { additionalProperties: false },
  ),
);
export type AuthorizeBody = Static<typeof AuthorizeBody>;

export const Authorization = Type.Object({
  authorizationUrl: Type.String({
    description: "The provider's consent page: send the user's browser there; it comes back to /oauth/callback",
  }),
  expiresAt: Type.String({ format: 'date-time', description: 'The flow must finish before this' }),
});
export const AuthorizationEnvelope = Type.Object({ authorization: Authorization });

export const OAuthProviderInfo = Type.Object({
  id: Type.Unsafe<OAuthProviderId>({ type: 'string', enum: [...OAUTH_PROVIDERS] }),
  name: Type.String(),
});
export const OAuthProviderList = Type.Object({
  providers: Type.Array(OAuthProviderInfo, {
    description: 'The providers the operator configured (client id and secret set); empty when none',
  }),
});

export const CallbackQuery = Type.Object(
  {
    state: Type.Optional(Type.String({ maxLength: 200 })),
    code: Type.Optional(Type.String({ maxLength: 4096 })),
    error: Type.Optional(Type.String({ maxLength: 200 })),
    error_description: Type.Optional(Type.String({ maxLength: 2000 })),
    // providers add their own parameters (Google: scope, authuser, prompt; Microsoft: session_state)
  },
  { additionalProperties: true },
);
export type CallbackQuery = Static<typeof CallbackQuery>;

export const PendingConnectParams = Type.Object(
  {
    id: Type.String({
      pattern: '^[A-Za-z0-9_-]{1,100}$',
      description: 'The `flow` of the confirmation link `/oauth/confirm?flow=<id>` the callback sent the browser to',
    }),
  },
  { additionalProperties: false },
);

export const PendingConnect = Type.Object({
  email: Type.String({ description: 'The address the provider reported for the account that consented' }),
  provider: Type.Unsafe<OAuthProviderId>({ type: 'string', enum: [...OAUTH_PROVIDERS] }),
  providerName: Type.String(),
  workspace: Type.Object({
    id: Type.String(),
    name: Type.String({ description: 'The workspace the mailbox would join' }),
  }),
  mailboxId: Type.Union([Type.String(), Type.Null()], {
    description: 'The mailbox this consent reconnects; null for a new one',
  }),
  expiresAt: Type.String({ format: 'date-time', description: 'Confirm before this, or start again' }),
});
export type PendingConnect = Static<typeof PendingConnect>;
export const PendingConnectEnvelope = Type.Object({ connection: PendingConnect });
