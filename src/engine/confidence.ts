/*
 * How sure a rate is. A share of k out of n says little when n is small: 3 of 3 in spam is
 * consistent with a true rate of 44 % or of 100 %. The Wilson score interval at 95 % gives the
 * range a true rate lies in, so a rule can act on "even the lowest plausible rate is over the line"
 * instead of on a bare ratio over a fixed minimum count.
 */

/** z for a two-sided 95 % interval. */
export const Z_95 = 1.959964;

function wilson(k: number, n: number, sign: 1 | -1): number {
  if (n <= 0) return sign === 1 ? 1 : 0;
  const p = Math.min(1, Math.max(0, k / n));
  const z2 = Z_95 * Z_95;
  const centre = p + z2 / (2 * n);
  const spread = Z_95 * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  return Math.min(1, Math.max(0, (centre + sign * spread) / (1 + z2 / n)));
}

/** The lowest rate (95 % Wilson score interval) consistent with k of n; 0 with no samples. */
export function wilsonLower(k: number, n: number): number {
  return wilson(k, n, -1);
}

/** The highest rate (95 % Wilson score interval) consistent with k of n; 1 with no samples. */
export function wilsonUpper(k: number, n: number): number {
  return wilson(k, n, 1);
}
