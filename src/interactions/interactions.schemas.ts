/*
 * The words of the interaction log, shared by the API contract (mailboxes.schemas.ts), the
 * repository that records them and the engine that acts: defined here, below all three.
 */

export const INTERACTION_TYPES = [
  'sent',
  'received',
  'opened',
  'flagged',
  'rescued',
  'replied',
  'bounced',
  'failed',
] as const;
export type InteractionType = (typeof INTERACTION_TYPES)[number];

/** Where a recipient found a warmup message. */
export const PLACEMENTS = ['inbox', 'spam', 'promotions', 'other'] as const;
export type Placement = (typeof PLACEMENTS)[number];
