/**
 * The seed's deterministic draws: every "random" figure is a hash of a key and a salt, so the
 * same inputs always give the same catalog.
 */
import type { PercentileStats } from '../lambdas/catalog/types';
import type { MinMaxMedian } from './seed-sources';

/** The median alone, spread into percentiles; null when the range has no median. */
export function medianOnly(range: MinMaxMedian | null | undefined): PercentileStats | null {
  if (range?.median == null) return null;
  return percentilesFrom(range.median);
}

/** A p50 somewhere between the model's min and max across providers. */
export function withinRange(range: MinMaxMedian | null | undefined, at: number): PercentileStats | null {
  if (range?.min == null || range.max == null) return null;
  return percentilesFrom(round(range.min + (range.max - range.min) * at, 1));
}

/**
 * The public `PercentileStats` has all four percentiles or none. The sources know a median
 * only, so the upper percentiles are spread from it by fixed ratios, as in the real
 * endpoint records (each percentile above the one before).
 */
function percentilesFrom(p50: number): PercentileStats {
  return { p50, p75: round(p50 * 1.25, 1), p90: round(p50 * 1.6, 1), p99: round(p50 * 2.4, 1) };
}

/** `value` rounded to `digits` decimal places. */
export function round(value: number, digits: number): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}

/** One of `options`, chosen by the hash of `key` and `salt`. */
export function pick<T>(key: string, salt: string, options: readonly T[]): T {
  return options[hash(`${key}|${salt}`) % options.length];
}

/** A number in [0, 1) from the hash of `key` and `salt`. */
export function unit(key: string, salt: string): number {
  return hash(`${key}|${salt}`) / 2 ** 32;
}

/**
 * `Math.imul`, bound once: where this code runs in a `vm` context (jest's), each lookup of the
 * global `Math` goes through the context's interceptors, which made the catalog seed's hashing
 * take about 450 ms of each test runtime's start instead of 70 ms.
 */
const imul = Math.imul;

/** FNV-1a (32-bit) over UTF-16 code units, finished with murmur3's fmix32 to spread low bits. */
export function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    h ^= text.charCodeAt(i);
    h = imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
