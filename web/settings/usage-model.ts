/**
 * What the usage section shows, worked out from the management API's answers: spend per UTC
 * day by key or by model, and each limit and budget as spent, left and when it resets. No DOM
 * here (the node tests import it): usage.ts and usage-chart.ts draw what this computes.
 */

/** A cap's window: `null` is all time (a lifetime budget, a limit without reset). */
export type ResetInterval = 'daily' | 'weekly' | 'monthly';

/** One `GET /keys` item, the fields the section reads (public `listKeys`; docs/limits.md). */
export interface KeyUsageView {
  hash: string;
  name: string;
  label: string;
  kind: 'workspace' | 'management' | 'personal';
  disabled: boolean;
  workspace_id: string | null;
  guardrail_ids: string[];
  usage: number;
  usage_daily: number;
  usage_weekly: number;
  usage_monthly: number;
  limit: number | null;
  limit_remaining: number | null;
  limit_reset: ResetInterval | null;
}

/** One `GET /activity` item: a day, a model and an endpoint (public `getUserActivity`). */
export interface ActivityItem {
  date: string;
  model: string;
  usage: number;
}

/** One `GET /guardrails` item: its budget is per key it covers. */
export interface GuardrailView {
  id: string;
  name: string;
  limit_usd: number | null;
  reset_interval: ResetInterval | null;
}

/** One `GET /workspaces` item: the guardrails attached to it. */
export interface WorkspaceView {
  id: string;
  name: string;
  guardrail_ids: string[];
}

/** One `GET /workspaces/{id}/budgets` item (public `WorkspaceBudget`): a pool over the workspace's keys. */
export interface WorkspaceBudgetView {
  id: string;
  workspace_id: string;
  limit_usd: number;
  reset_interval: ResetInterval | null;
}

/** `GET /activity` answers for today and this many UTC days before it. */
export const ACTIVITY_DAYS = 30;

/** Keys charted on their own (one `GET /activity?api_key_hash=` each); the rest is “Other keys”. */
export const CHARTED_KEYS = 10;

/** Models charted on their own; the rest is “Other models”. */
export const CHARTED_MODELS = 10;

const WHOLE_CENTS = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', minimumFractionDigits: 2, maximumFractionDigits: 2 });
const SMALL = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', maximumSignificantDigits: 3 });

/**
 * USD as the page shows it: cents from one cent up, three significant digits below (a
 * completion can cost a millionth of a dollar, which “$0.00” would hide).
 *
 * @example formatUsd(12.5) === '$12.50'; formatUsd(0.0000135) === '$0.0000135'
 */
export function formatUsd(amount: number): string {
  if (amount === 0) return '$0.00';
  // One sum in two orders can differ in its last bits (1.425e-5 and 1.4249999999999999e-5): both show alike.
  const settled = Number(amount.toPrecision(12));
  return Math.abs(settled) >= 0.01 ? WHOLE_CENTS.format(settled) : SMALL.format(settled);
}

const isoDate = (at: Date) => at.toISOString().slice(0, 10);

/** The UTC dates `GET /activity` covers at `now`, oldest first: the {@link ACTIVITY_DAYS} days before today, and today. */
export function activityDates(now: Date): string[] {
  const dates: string[] = [];
  for (let back = ACTIVITY_DAYS; back >= 0; back--) {
    dates.push(isoDate(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() - back))));
  }
  return dates;
}

/**
 * When a cap's window next starts again (docs/limits.md): the next UTC midnight, the next
 * Monday at UTC midnight, the next first of a month; null for one that never resets.
 */
export function nextReset(interval: ResetInterval | null, now: Date): Date | null {
  const [year, month, day] = [now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()];
  if (interval === 'daily') return new Date(Date.UTC(year, month, day + 1));
  if (interval === 'weekly') return new Date(Date.UTC(year, month, day + 7 - ((now.getUTCDay() + 6) % 7)));
  if (interval === 'monthly') return new Date(Date.UTC(year, month + 1, 1));
  return null;
}

/** What a key spent in the current window of `interval` (all time for null). */
export function spentIn(key: KeyUsageView, interval: ResetInterval | null): number {
  if (interval === 'daily') return key.usage_daily;
  if (interval === 'weekly') return key.usage_weekly;
  if (interval === 'monthly') return key.usage_monthly;
  return key.usage;
}

/** The keys to chart on their own: those with the most spend this month (then all time), at most `count`. */
export function keysToChart(keys: readonly KeyUsageView[], count = CHARTED_KEYS): KeyUsageView[] {
  return keys
    .filter((key) => key.usage > 0)
    .sort((a, b) => b.usage_monthly - a.usage_monthly || b.usage - a.usage || a.name.localeCompare(b.name))
    .slice(0, count);
}

// ---------------------------------------------------------------------------------------
// Spend per day

/** One stacked series of the chart: a key, a model, or what the others spent together. */
export interface Series {
  id: string;
  name: string;
  /** A key's label, shown beside its name: two keys may share a name. */
  detail: string | null;
  /** Everything not charted on its own: drawn last, in grey. */
  other: boolean;
  /** USD per UTC date; dates without spend are absent. */
  perDay: ReadonlyMap<string, number>;
  total: number;
}

/** The chart's figures: its dates, oldest first, and its series, largest first, “other” last. */
export interface DailySpend {
  dates: string[];
  series: Series[];
  /** USD per date over every series. */
  totals: ReadonlyMap<string, number>;
}

/**
 * The top of the chart's scale: the smallest 1, 2, 2.5 or 5 times a power of ten at or above
 * `max`, so that its half, the middle grid line, is a round amount too.
 *
 * @example niceCeiling(0.0000135) === 0.00002; niceCeiling(7) === 10
 */
export function niceCeiling(max: number): number {
  if (!(max > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(max));
  // Rounded to the power's digits: 2.5 * 1e-6 is 0.0000025000000000000002 in floats.
  const top = [1, 2, 2.5, 5, 10].map((step) => Number((step * power).toPrecision(2))).find((candidate) => candidate >= max);
  return top ?? 10 * power;
}

function byDay(rows: readonly ActivityItem[], dates: ReadonlySet<string>): Map<string, number> {
  const perDay = new Map<string, number>();
  for (const row of rows) if (dates.has(row.date) && row.usage !== 0) perDay.set(row.date, (perDay.get(row.date) ?? 0) + row.usage);
  return perDay;
}

function series(id: string, name: string, perDay: Map<string, number>, { detail = null as string | null, other = false } = {}): Series {
  let total = 0;
  for (const amount of perDay.values()) total += amount;
  return { id, name, detail, other, perDay, total };
}

function spendOf(dates: string[], charted: Series[], totals: Map<string, number>): DailySpend {
  return { dates, series: charted.filter((entry) => entry.total > 0), totals };
}

/** Spend per day by model: the {@link CHARTED_MODELS} with the most spend over the period, then “Other models”. */
export function spendByModel(rows: readonly ActivityItem[], dates: string[], count = CHARTED_MODELS): DailySpend {
  const inRange = new Set(dates);
  const models = new Map<string, ActivityItem[]>();
  for (const row of rows) models.set(row.model, [...(models.get(row.model) ?? []), row]);
  const all = [...models].map(([model, modelRows]) => series(model, model, byDay(modelRows, inRange))).sort((a, b) => b.total - a.total || a.name.localeCompare(b.name));
  const rest = new Map<string, number>();
  for (const entry of all.slice(count)) for (const [date, amount] of entry.perDay) rest.set(date, (rest.get(date) ?? 0) + amount);
  return spendOf(dates, [...all.slice(0, count), series('other', 'Other models', rest, { other: true })], byDay(rows, inRange));
}

/**
 * Spend per day by key: each charted key's own activity, then “Other keys”: what the
 * organization spent beyond them (keys not charted, deleted keys), so the stacks add up to the
 * organization's spend.
 */
export function spendByKey(organization: readonly ActivityItem[], charted: readonly { key: KeyUsageView; rows: readonly ActivityItem[] }[], dates: string[]): DailySpend {
  const inRange = new Set(dates);
  const totals = byDay(organization, inRange);
  const keys = charted
    .map(({ key, rows }) => series(key.hash, key.name, byDay(rows, inRange), { detail: key.label }))
    .sort((a, b) => b.total - a.total || a.name.localeCompare(b.name));
  const rest = new Map<string, number>();
  for (const [date, total] of totals) {
    const left = keys.reduce((amount, entry) => amount - (entry.perDay.get(date) ?? 0), total);
    // Float sums of the same amounts in another order differ in the last bits: that is no spend.
    if (left > total * 1e-9) rest.set(date, left);
  }
  return spendOf(dates, [...keys, series('other', 'Other keys', rest, { other: true })], totals);
}

// ---------------------------------------------------------------------------------------
// Limits and budgets

/** One cap as a bar: what was spent in its current window, what is left, and when it resets. */
export interface SpendBar {
  /** Whose spend: a key's hash, or a workspace budget's id. */
  id: string;
  /** What the bar is about, in words: a key's name, or the budget's interval. */
  title: string;
  interval: ResetInterval | null;
  limit: number;
  spent: number;
  left: number;
  /** Null: never. */
  resetsAt: Date | null;
}

function bar(id: string, title: string, interval: ResetInterval | null, limit: number, spent: number, now: Date, left = Math.max(0, limit - spent)): SpendBar {
  return { id, title, interval, limit, spent, left, resetsAt: nextReset(interval, now) };
}

const byName = (a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name);

/** Each key limit: spent in the limit's window, and `limit_remaining` as the API reckons it. */
export function keyLimitBars(keys: readonly KeyUsageView[], now: Date): SpendBar[] {
  return keys
    .filter((key): key is KeyUsageView & { limit: number } => key.limit !== null)
    .sort(byName)
    .map((key) => bar(key.hash, key.name, key.limit_reset, key.limit, spentIn(key, key.limit_reset), now, key.limit_remaining ?? undefined));
}

/**
 * The keys of a workspace whose spend counts in it: not management keys, which the key listing
 * places in the default workspace (they belong to none) and which make no inference requests.
 */
function spendingKeysOf(keys: readonly KeyUsageView[], workspaceId: string): KeyUsageView[] {
  return keys.filter((key) => key.kind !== 'management' && key.workspace_id === workspaceId);
}

/**
 * Each guardrail with a budget, and one bar per key it covers (docs/limits.md: the budget is
 * each key's own): the keys it is assigned to, and the keys of the workspaces it is assigned to.
 */
export function guardrailBudgets(guardrails: readonly GuardrailView[], keys: readonly KeyUsageView[], workspaces: readonly WorkspaceView[], now: Date) {
  return guardrails
    .filter((guardrail): guardrail is GuardrailView & { limit_usd: number } => guardrail.limit_usd !== null)
    .sort(byName)
    .map((guardrail) => {
      const covered = new Map<string, KeyUsageView>();
      for (const key of keys) if (key.guardrail_ids.includes(guardrail.id)) covered.set(key.hash, key);
      for (const workspace of workspaces.filter((candidate) => candidate.guardrail_ids.includes(guardrail.id))) {
        for (const key of spendingKeysOf(keys, workspace.id)) covered.set(key.hash, key);
      }
      const bars = [...covered.values()].sort(byName).map((key) => bar(key.hash, key.name, guardrail.reset_interval, guardrail.limit_usd, spentIn(key, guardrail.reset_interval), now));
      return { guardrail, bars };
    });
}

const INTERVAL_ORDER: (ResetInterval | null)[] = ['daily', 'weekly', 'monthly', null];

/** Each workspace with budgets, one bar per budget, narrowest first: spent is what its keys spent together in the window. */
export function workspaceBudgets(workspaces: readonly WorkspaceView[], budgets: ReadonlyMap<string, readonly WorkspaceBudgetView[]>, keys: readonly KeyUsageView[], now: Date) {
  return workspaces
    .filter((workspace) => (budgets.get(workspace.id) ?? []).length > 0)
    .sort(byName)
    .map((workspace) => {
      const members = spendingKeysOf(keys, workspace.id);
      const bars = [...budgets.get(workspace.id)!]
        .sort((a, b) => INTERVAL_ORDER.indexOf(a.reset_interval) - INTERVAL_ORDER.indexOf(b.reset_interval))
        .map((budget) => {
          const spent = members.reduce((sum, key) => sum + spentIn(key, budget.reset_interval), 0);
          return bar(budget.id, `${intervalName(budget.reset_interval)} budget`, budget.reset_interval, budget.limit_usd, spent, now);
        });
      return { workspace, bars };
    });
}

/** `Daily`, `Weekly`, `Monthly`, `Lifetime`. */
export function intervalName(interval: ResetInterval | null): string {
  return { daily: 'Daily', weekly: 'Weekly', monthly: 'Monthly', none: 'Lifetime' }[interval ?? 'none'];
}

const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];

/**
 * When a cap resets, in UTC, the same in every time zone.
 *
 * @example resetText('weekly', new Date('2026-11-30T00:00:00Z')) === 'Resets Mon 2026-11-30 00:00 UTC (every Monday)'
 */
export function resetText(interval: ResetInterval | null, resetsAt: Date | null): string {
  if (interval === null || resetsAt === null) return 'Never resets (lifetime)';
  const rule = { daily: 'every day', weekly: 'every Monday', monthly: 'on the 1st of every month' }[interval];
  return `Resets ${WEEKDAYS[resetsAt.getUTCDay()]} ${isoDate(resetsAt)} 00:00 UTC (${rule})`;
}
