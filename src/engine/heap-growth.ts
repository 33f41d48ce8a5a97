/*
 * How far V8 lets the heap grow between two full collections in a process that runs the engine.
 * Planning a day allocates mostly short-lived objects, but what lives for a batch of mailboxes (its
 * sends, rows and query results) survives a few young collections and is promoted; with collections
 * that cheap, V8 lets the old generation grow to about 4× what survives one before it collects it
 * again, so a worker planning 100,000 mailboxes around 70 MB of live state passed 600 MB of memory.
 */
import v8 from 'node:v8';

/** The old generation may grow by this share of what survived the last full collection (V8's own choice otherwise, up to 300 %). */
export const HEAP_GROWING_PERCENT = 25;

/**
 * Makes V8 collect the old generation once it grew by HEAP_GROWING_PERCENT, unless the process
 * was started with its own setting. Not a cap: the heap still grows as far as the live data needs
 * (a larger pool never runs out of memory for it), only the garbage left between collections is
 * bounded, at the cost of more frequent full collections (a few % of the planning's CPU).
 */
export function limitHeapGrowth(): void {
  const given = process.execArgv.some((option) => /heap[-_]growing[-_]percent/.test(option));
  if (!given) v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
