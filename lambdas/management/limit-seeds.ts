import type { AccountsService } from '../accounts/accounts-service';
import type { Guardrail } from '../accounts/types';
import type { Clock } from '../clock';
import type { SpendBefore } from '../budgets/budget-gate';
import type { BudgetLedgerStore } from '../budgets/budget-ledgers';
import { budgetLayers, workspaceBudgetLayers, type BudgetLayer } from '../budgets/layers';
import { seedLedgers } from '../budgets/ledger-seeds';

/**
 * After a change that may set a spending limit has landed, the ledgers of the limits that began
 * during their period are started at what was spent (lambdas/budgets/ledger-seeds.ts): a key's
 * limit and guardrail budgets, a workspace's budgets. Best effort: a ledger not started here is
 * started by the first request that needs it, exactly, at the cost of that request reading usage.
 */
export interface LimitSeeds {
  /** The layers of these keys of the organization. */
  keys(organizationId: string, keyHashes: readonly string[]): Promise<void>;
  /** The budgets of this workspace (its id). */
  workspace(organizationId: string, workspaceId: string): Promise<void>;
  /** The keys a guardrail is assigned to directly. */
  guardrail(organizationId: string, guardrailId: string): Promise<void>;
}

/** At most this many keys are seeded after one change; the rest start on their first request. */
const MAX_SEEDED_KEYS = 100;

/** The seeds over the accounts service and the ledgers; a failed seed never fails the change. */
export function limitSeeds(service: AccountsService, ledgers: Pick<BudgetLedgerStore, 'seed'>, spendBefore: SpendBefore, clock: Clock): LimitSeeds {
  const seed = async (layers: readonly BudgetLayer[]) => {
    // A failed seed costs only the first request's read of usage: never the change that landed.
    await seedLedgers(ledgers, spendBefore, layers, clock.now()).catch(() => 0);
  };
  const keyLayers = async (organizationId: string, hash: string): Promise<BudgetLayer[]> => {
    const key = await service.getApiKey(organizationId, hash);
    const workspace = key.workspaceId ? await service.getWorkspace(organizationId, key.workspaceId).catch(() => null) : null;
    const ids = [...new Set([...key.guardrailIds, ...(workspace?.guardrailIds ?? [])])];
    const guardrails = (await Promise.all(ids.map((id) => service.getGuardrail(organizationId, id).catch(() => undefined)))).filter((g): g is Guardrail => g !== undefined);
    return budgetLayers({ key, workspace }, guardrails);
  };
  const keys = async (organizationId: string, hashes: readonly string[]) => {
    const layers = await Promise.all(hashes.slice(0, MAX_SEEDED_KEYS).map((hash) => keyLayers(organizationId, hash).catch(() => [])));
    await seed(layers.flat());
  };
  return {
    keys,
    async workspace(organizationId, workspaceId) {
      await seed(workspaceBudgetLayers(await service.getWorkspace(organizationId, workspaceId)));
    },
    async guardrail(organizationId, guardrailId) {
      const assigned = await service.listKeyAssignments(organizationId, guardrailId);
      await keys(
        organizationId,
        assigned.map((assignment) => assignment.key.hash),
      );
    },
  };
}
