/**
 * Counts a provider or a client reports (tokens, indexes): hostile numbers, held to one reading
 * everywhere they are read.
 */

/**
 * A count as reported: a whole number from 0 up to the largest safe integer; a finite fraction
 * in that range is its whole part. Anything else (negative, infinite, NaN, past the safe
 * integers, not a number) is no count.
 */
export function countOf(value: unknown): number | undefined {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > Number.MAX_SAFE_INTEGER) return undefined;
  return Math.floor(value);
}
