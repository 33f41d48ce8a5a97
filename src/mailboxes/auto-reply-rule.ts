/**
 * A mailbox whose owner answers automatically (out of office, vacation) receives no warmup mail:
 * every warmup email would draw one more automatic reply into a partner's inbox, and a person
 * away should come back to a mailbox that was left alone. The rule ends by itself once no
 * automatic reply from it was seen for AUTO_REPLY_QUIET_DAYS, or at once when its owner resumes
 * it. (After the quiet days it receives mail again; an automatic reply still running answers that
 * mail and starts the quiet days over.)
 */
export const AUTO_REPLY_QUIET_DAYS = 3;
const QUIET_MS = AUTO_REPLY_QUIET_DAYS * 24 * 60 * 60_000;

/** When the mailbox receives warmup mail again, if nothing changes. */
export function receivesAgainAt(autoReplyAt: string): Date {
  return new Date(new Date(autoReplyAt).getTime() + QUIET_MS);
}

/** Whether the mailbox still counts as answering automatically at `now`. */
export function answersAutomatically(autoReplyAt: string | null, now: Date): boolean {
  return autoReplyAt !== null && receivesAgainAt(autoReplyAt) > now;
}
