import type { AccountStore } from '../accounts/account-store';
import { FIRST_DATE, utcDate, type KeyUsage, type UsageStore } from '../usage/usage';
import type { SpendBefore } from './spending-gate';
import { periodAt, type SpendWindow } from './periods';
import { plainDecimal } from '../accounts/stored-limits';
import { plus, ZERO } from '../usd';

const IN_WINDOW: Readonly<Record<SpendWindow, keyof KeyUsage>> = { day: 'daily', week: 'weekly', month: 'monthly', all: 'usage' };

/**
 * What a scope has spent in a window's current period, from usage, read when a limit that began
 * during the period first counts the scope (spending-gate.ts): a key's own; a workspace's from
 * its running totals and the usage after them, which count its deleted keys too, without reading
 * a key. Where those do not reach back to the period's start (usage an earlier release recorded
 * without its workspace), the sum of the keys the workspace holds and of those it held that were
 * deleted, in one read of the organization's usage.
 */
export function spendBeforeFrom(accounts: Pick<AccountStore, 'listWorkspaceApiKeys' | 'formerWorkspaceKeys'>, usage: Pick<UsageStore, 'keyUsage' | 'workspaceUsage'>): SpendBefore {
  return async (scope, window, at) => {
    if (scope.kind === 'workspace') {
      const counted = await usage.workspaceUsage(scope.organizationId, scope.workspaceId, at, windowStart(window, at));
      if (counted) return spentIn(counted, window);
    }
    const hashes = scope.kind === 'key' ? [scope.keyHash] : await workspaceKeys(accounts, scope.organizationId, scope.workspaceId);
    if (hashes.length === 0) return ZERO;
    const spent = await usage.keyUsage(scope.organizationId, hashes, at);
    return plus(...[...spent.values()].map((figures) => spentIn(figures, window)));
  };
}

/** What usage figures say was spent in a window's current period, as an exact decimal (none: nothing). */
export function spentIn(figures: KeyUsage | undefined, window: SpendWindow): string {
  return figures ? plainDecimal(figures[IN_WINDOW[window]]) : ZERO;
}

/** The first day of a window's current period at `at` (UTC, `YYYY-MM-DD`); for all time, before any. */
function windowStart(window: SpendWindow, at: Date): string {
  const { start } = periodAt(window, at);
  return start ? utcDate(start) : FIRST_DATE;
}

/** Every key a workspace holds or held: its keys, and the marks its deleted keys left. */
async function workspaceKeys(accounts: Pick<AccountStore, 'listWorkspaceApiKeys' | 'formerWorkspaceKeys'>, organizationId: string, workspaceId: string): Promise<string[]> {
  const [current, former] = await Promise.all([accounts.listWorkspaceApiKeys(organizationId, workspaceId), accounts.formerWorkspaceKeys(organizationId, workspaceId)]);
  return [...(current?.keys.map((key) => key.hash) ?? []), ...former];
}
