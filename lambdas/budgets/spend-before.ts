import type { AccountStore } from '../accounts/account-store';
import type { KeyUsage, UsageStore } from '../usage/usage';
import type { SpendBefore } from './budget-gate';
import type { BudgetWindow } from './periods';
import { plainDecimal } from '../accounts/spend-caps';
import { plus, ZERO } from '../usd';

const IN_WINDOW: Readonly<Record<BudgetWindow, keyof KeyUsage>> = { day: 'daily', week: 'weekly', month: 'monthly', all: 'usage' };

/**
 * What a scope has spent in a window's current period, from usage: a key's own, or the sum of
 * the keys a workspace holds now. Read when a layer that began during the period first counts
 * the scope (budget-gate.ts); its keys' usage in one read of the organization's usage.
 */
export function spendBeforeFrom(accounts: Pick<AccountStore, 'listWorkspaceApiKeys'>, usage: Pick<UsageStore, 'keyUsage'>): SpendBefore {
  return async (scope, window, at) => {
    const hashes =
      scope.kind === 'key' ? [scope.keyHash] : ((await accounts.listWorkspaceApiKeys(scope.organizationId, scope.workspaceId))?.keys.map((key) => key.hash) ?? []);
    if (hashes.length === 0) return ZERO;
    const spent = await usage.keyUsage(scope.organizationId, hashes, at);
    return plus(...[...spent.values()].map((figures) => plainDecimal(figures[IN_WINDOW[window]])));
  };
}
