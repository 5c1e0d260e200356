import { invalidParameter } from '../errors';
import { addDecimals, expandExponent } from '../decimal';

/**
 * Spending limits (docs/limits.md, "Glossary"): a key's limit, a guardrail's budget and a workspace's budgets,
 * each an amount of USD over a window that resets at UTC midnight (daily), on Monday at UTC
 * midnight (weekly), on the first of the month (monthly), or never (over all time).
 */

export const RESET_INTERVALS = ['daily', 'weekly', 'monthly'] as const;
/** When a limit's window resets; `null` where a limit is stored means never (all time). */
export type ResetInterval = (typeof RESET_INTERVALS)[number];

/** A workspace budget's interval on the wire: `lifetime` is one that never resets. */
export const BUDGET_INTERVALS = ['daily', 'weekly', 'monthly', 'lifetime'] as const;
/** One of {@link BUDGET_INTERVALS}: a workspace has at most one budget of each. */
export type BudgetInterval = (typeof BUDGET_INTERVALS)[number];

/**
 * A limit as stored. `since` is when this limit's window began to apply: set when the limit is first
 * set and when its reset interval changes, kept when only the amount changes. Spend is counted
 * against the limit from the start of its current window, what was spent before `since` included
 * (lambdas/spending/ledgers.ts).
 */
export interface StoredLimit {
  /** USD, an exact decimal string. */
  amountUsd: string;
  reset: ResetInterval | null;
  since: string;
  /** What the last change of the amount found of the holds already out ({@link HeldAtChange}). */
  heldAtChange?: HeldAtChange;
}

/**
 * Whether the holds a limit's ledger had granted when its amount last changed fit the new amount
 * (docs/architecture.md, "Spending limits"), for the periods whose items the change checked: the
 * change landed only with their `committed` within it (`fit`), or on them regardless. Either way
 * it wrote the new amount on them, so no grant asked under an older amount lands after it.
 */
export interface HeldAtChange {
  periods: string[];
  fit: boolean;
}

/** One of a workspace's budgets: a pooled limit on what every key of the workspace spends. */
export interface WorkspaceBudget {
  id: string;
  amountUsd: string;
  createdAt: string;
  updatedAt: string;
  heldAtChange?: HeldAtChange;
}

/** A workspace's budgets, at most one per interval. */
export type WorkspaceBudgets = Partial<Record<BudgetInterval, WorkspaceBudget>>;

/** The largest limit accepted: far above any real budget, far below where decimals lose digits. */
export const MAX_CAP_USD = 1_000_000_000;
/** Limits are whole micro-dollars at most: finer amounts are not money anyone budgets. */
const CAP_DECIMALS = 6;

/**
 * A USD amount from a JSON number, as an exact decimal string: finite, within 0 (or above it,
 * `positive`) and {@link MAX_CAP_USD}, at most six decimals. Anything else is a 400 naming
 * `field`.
 */
export function limitAmount(value: unknown, field: string, { positive = false } = {}): string {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw invalidParameter(field, 'must be a number');
  if (positive ? !(value > 0) : value < 0) throw invalidParameter(field, positive ? 'must be greater than 0' : 'must be 0 or more');
  if (value > MAX_CAP_USD) throw invalidParameter(field, `must be at most ${MAX_CAP_USD}`);
  const exact = plainDecimal(value);
  const fraction = exact.split('.')[1] ?? '';
  if (fraction.length > CAP_DECIMALS) throw invalidParameter(field, `must have at most ${CAP_DECIMALS} decimal places`);
  return exact;
}

/**
 * The limit after a change: `wanted` null removes it; a new limit, or a new reset interval, starts
 * a new window at `now`; a new amount alone keeps the window (and what it has counted).
 */
export function nextLimit(current: StoredLimit | null | undefined, wanted: { amountUsd: string; reset: ResetInterval | null } | null, now: string): StoredLimit | null {
  if (wanted === null) return null;
  const since = current && current.reset === wanted.reset ? current.since : now;
  return { amountUsd: wanted.amountUsd, reset: wanted.reset, since };
}

/** The decimal a double prints as, exponent resolved: `1e-7` is `0.0000001`. */
export function plainDecimal(value: number): string {
  return addDecimals([expandExponent(String(value))]);
}
