import type { AccountStore } from '../accounts/account-store';
import type { KeyUsage, UsageStore } from '../usage/usage';
import type { SpendBefore } from './spending-gate';
import type { SpendWindow } from './periods';
import { plainDecimal } from '../accounts/stored-limits';
import { plus, ZERO } from '../usd';

const IN_WINDOW: Readonly<Record<SpendWindow, keyof KeyUsage>> = { day: 'daily', week: 'weekly', month: 'monthly', all: 'usage' };

/**
 * What a scope has spent in a window's current period, from usage: a key's own, or the sum of
 * the keys a workspace holds now and of those it held that were deleted. Read when a limit that began during the period first counts
 * the scope (spending-gate.ts); its keys' usage in one read of the organization's usage.
 */
export function spendBeforeFrom(accounts: Pick<AccountStore, 'listWorkspaceApiKeys' | 'formerWorkspaceKeys'>, usage: Pick<UsageStore, 'keyUsage'>): SpendBefore {
  return async (scope, window, at) => {
    const hashes = scope.kind === 'key' ? [scope.keyHash] : await workspaceKeys(accounts, scope.organizationId, scope.workspaceId);
    if (hashes.length === 0) return ZERO;
    const spent = await usage.keyUsage(scope.organizationId, hashes, at);
    return plus(...[...spent.values()].map((figures) => plainDecimal(figures[IN_WINDOW[window]])));
  };
}

/** Every key a workspace holds or held: its keys, and the marks its deleted keys left. */
async function workspaceKeys(accounts: Pick<AccountStore, 'listWorkspaceApiKeys' | 'formerWorkspaceKeys'>, organizationId: string, workspaceId: string): Promise<string[]> {
  const [current, former] = await Promise.all([accounts.listWorkspaceApiKeys(organizationId, workspaceId), accounts.formerWorkspaceKeys(organizationId, workspaceId)]);
  return [...(current?.keys.map((key) => key.hash) ?? []), ...former];
}
