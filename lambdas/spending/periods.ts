import type { ResetInterval } from '../accounts/stored-limits';

/**
 * The windows a limit counts spend over, in UTC: a day from midnight, a week from Monday midnight,
 * a month from the first, or all time.
 */
export type SpendWindow = 'day' | 'week' | 'month' | 'all';

/** The window of a reset interval; no interval counts all time. */
export function windowOf(reset: ResetInterval | null): SpendWindow {
  if (reset === 'daily') return 'day';
  if (reset === 'weekly') return 'week';
  if (reset === 'monthly') return 'month';
  return 'all';
}

/** One window's current period: its id (`d2026-11-27`, `w2026-11-23`, `m2026-11`, `all`), when it began and when it resets. */
export interface Period {
  id: string;
  /** Null for all time. */
  start: Date | null;
  /** Null for all time. */
  resetsAt: Date | null;
}

/**
 * The period of `window` that `at` falls in.
 * @example periodAt('week', new Date('2026-11-27T12:00:00Z')).id // 'w2026-11-23'
 */
export function periodAt(window: SpendWindow, at: Date): Period {
  const year = at.getUTCFullYear();
  const month = at.getUTCMonth();
  const day = at.getUTCDate();
  if (window === 'day') {
    const start = new Date(Date.UTC(year, month, day));
    return { id: `d${isoDate(start)}`, start, resetsAt: new Date(Date.UTC(year, month, day + 1)) };
  }
  if (window === 'week') {
    const sinceMonday = (at.getUTCDay() + 6) % 7;
    const start = new Date(Date.UTC(year, month, day - sinceMonday));
    return { id: `w${isoDate(start)}`, start, resetsAt: new Date(Date.UTC(year, month, day - sinceMonday + 7)) };
  }
  if (window === 'month') {
    const start = new Date(Date.UTC(year, month, 1));
    return { id: `m${isoDate(start).slice(0, 7)}`, start, resetsAt: new Date(Date.UTC(year, month + 1, 1)) };
  }
  return { id: 'all', start: null, resetsAt: null };
}

const isoDate = (at: Date) => at.toISOString().slice(0, 10);
