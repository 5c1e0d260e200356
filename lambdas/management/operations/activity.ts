import { invalidParameter } from '../../errors';
import { daysBefore, utcDate, type ActivityRow } from '../../usage/usage';
import type { ACTIVITY_ROUTES } from '../routes/activity';
import { orgOf, type Operations } from '../operation';
import { activityView } from '../views';

/** How far back `GET /activity` reaches, in UTC days before today. */
const ACTIVITY_DAYS = 30;

/** `GET /activity`: the organization's usage per day, model and endpoint over the last 30 UTC days, of one key or all. */
export const ACTIVITY_OPERATIONS: Operations<typeof ACTIVITY_ROUTES> = {
  getUserActivity: async ({ principal, query, deps }) => {
    const today = utcDate(deps.clock.now());
    const earliest = daysBefore(deps.clock.now(), ACTIVITY_DAYS);
    let from = earliest;
    let to = today;
    if (query.date !== undefined) {
      // The window moves with the clock: a rule the schema (`format: date`) cannot state.
      if (!/^\d{4}-\d{2}-\d{2}$/.test(query.date) || query.date < earliest || query.date > today) {
        throw invalidParameter('date', `must be a UTC date (YYYY-MM-DD) from ${earliest} to ${today}`);
      }
      from = to = query.date;
    }
    const onlyKey = query.api_key_hash;
    if (onlyKey !== undefined) await deps.service.getApiKey(orgOf(principal), onlyKey);
    const rows = await deps.usage.activity(orgOf(principal), from, to);
    return { data: aggregateActivity(rows.filter((row) => !onlyKey || row.keyHash === onlyKey)).map(activityView) };
  },
};

/** Rows of several keys for one day, model and endpoint become one row (the public shape has no key). */
function aggregateActivity(rows: readonly ActivityRow[]): Omit<ActivityRow, 'keyHash'>[] {
  const byGroup = new Map<string, Omit<ActivityRow, 'keyHash'>>();
  for (const { keyHash: _keyHash, ...row } of rows) {
    const group = `${row.date}|${row.endpointId}`;
    const current = byGroup.get(group);
    if (!current) {
      byGroup.set(group, { ...row, requestsViaPolicy: { ...row.requestsViaPolicy } });
      continue;
    }
    current.requests += row.requests;
    current.promptTokens += row.promptTokens;
    current.completionTokens += row.completionTokens;
    current.usage += row.usage;
    current.requestsViaApiKey += row.requestsViaApiKey;
    for (const [policy, count] of Object.entries(row.requestsViaPolicy)) {
      current.requestsViaPolicy[policy] = (current.requestsViaPolicy[policy] ?? 0) + count;
    }
  }
  // Newest day first, then by model and endpoint.
  return [...byGroup.values()].sort((a, b) => b.date.localeCompare(a.date) || a.endpointId.localeCompare(b.endpointId));
}
