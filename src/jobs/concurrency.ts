/** Runs `work` over `items` with at most `limit` at a time. */
export async function forEachLimited<T>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const item = items[next];
      next += 1;
      await work(item);
    }
  });
  await Promise.all(lanes);
}

/**
 * Runs `work` on `lanes` lanes over items claimed as lanes fall idle: a lane that finished its item
 * takes the next one at once instead of waiting for the others, so one slow item (a provider far
 * away, a big mailbox) holds up its own lane only. Each claim asks for as many items as lanes are
 * idle then (all of them at the start, then mostly one), so nothing is held that no lane works on.
 *
 * Claims run one at a time: `claim` may keep a cursor (the last item it returned) without a race.
 * A claim that returns fewer items than asked means nothing more is due: no more claims are made,
 * and the lanes end once their items are done. `stop()` true: no more claims, but items already
 * claimed are still handed to `work` (which gives them back). A failed claim or `work` stops the
 * claiming too; the first error is thrown once every lane has finished, so no claimed item is left
 * behind unattended.
 */
export async function forEachClaimed<T>(
  lanes: number,
  claim: (limit: number) => Promise<readonly T[]>,
  work: (item: T) => Promise<void>,
  stop: () => boolean = () => false,
): Promise<void> {
  const claimed: T[] = [];
  // lanes with an item in hand (taken from `claimed`, not yet done)
  let busy = 0;
  let exhausted = false;
  const errors: unknown[] = [];
  let claiming: Promise<void> | null = null;

  const claimMore = async (): Promise<void> => {
    const limit = lanes - busy;
    try {
      const items = await claim(limit);
      claimed.push(...items);
      if (items.length < limit) exhausted = true;
    } catch (error) {
      errors.push(error);
      exhausted = true;
    }
  };

  const nextItem = async (): Promise<{ item: T } | null> => {
    for (;;) {
      if (claimed.length > 0) {
        busy += 1;
        return { item: claimed.shift() as T };
      }
      if (exhausted || stop()) return null;
      claiming ??= claimMore().finally(() => {
        claiming = null;
      });
      await claiming;
    }
  };

  const lane = async (): Promise<void> => {
    for (let next = await nextItem(); next; next = await nextItem()) {
      try {
        await work(next.item);
      } catch (error) {
        errors.push(error);
        exhausted = true;
      } finally {
        busy -= 1;
      }
    }
  };
  await Promise.all(Array.from({ length: lanes }, lane));
  if (errors.length > 0) throw errors[0];
}
