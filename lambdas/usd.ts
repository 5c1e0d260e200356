import { addDecimals, multiplyDecimal } from './decimal';

/**
 * Exact USD arithmetic on decimal strings (the pricing module's), for what a budget counts: a
 * cost is the product of prices with many decimals, and sums of them must compare exactly
 * against a limit, never in floating point.
 */

/** Zero dollars, in the form these functions return it. */
export const ZERO = '0';

/** The exact sum of USD amounts. */
export function plus(...values: readonly string[]): string {
  return addDecimals(values);
}

/** `a` less `b`, exactly; negative when `b` is more. */
export function minus(a: string, b: string): string {
  return addDecimals([a, negate(b)]);
}

/** The exact product of two amounts, e.g. a token count by its price, or an estimate by a growth factor. */
export function times(a: string, b: string): string {
  return multiplyDecimal(a, b);
}

/** `value` with its sign turned; zero stays "0". */
export function negate(value: string): string {
  if (value === '0') return value;
  return value.startsWith('-') ? value.slice(1) : `-${value}`;
}

/** -1, 0 or 1 as `a` is less than, equal to or greater than `b`. */
export function compare(a: string, b: string): -1 | 0 | 1 {
  const difference = minus(a, b);
  if (difference === '0') return 0;
  return difference.startsWith('-') ? -1 : 1;
}

/** Whether `a` is no more than `b`: whether a cost fits what is left. */
export const atMost = (a: string, b: string): boolean => compare(a, b) <= 0;

/** The larger of two amounts. */
export function larger(a: string, b: string): string {
  return compare(a, b) >= 0 ? a : b;
}

/** The smaller of two amounts. */
export function smaller(a: string, b: string): string {
  return compare(a, b) <= 0 ? a : b;
}

/** `value` rounded up to whole `step`s of 10^-decimals: slices are granted in round amounts. */
export function roundUp(value: string, decimals: number): string {
  const [whole, fraction = ''] = value.replace(/^-/, '').split('.');
  if (fraction.length <= decimals) return value;
  const kept = `${whole}.${fraction.slice(0, decimals)}`;
  if (value.startsWith('-')) return addDecimals([`-${kept}`]);
  return addDecimals([kept, decimals === 0 ? '1' : `0.${'0'.repeat(decimals - 1)}1`]);
}
