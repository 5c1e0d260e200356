import { budgetInterval } from '../../accounts/spend-limits';
import type { WORKSPACE_BUDGET_ROUTES } from '../routes/workspace-budgets';
import { orgOf, type Operations } from '../operation';
import { workspaceBudgetAnswer, workspaceBudgetsAnswer } from '../views';
import { workspaceRef } from './workspaces';

const interval = (params: Record<string, string>) => budgetInterval(params.interval);

/** `/workspaces/{id}/budgets…`: a workspace's spending budgets, one per reset interval; setting one starts its ledgers. */
export const WORKSPACE_BUDGET_OPERATIONS: Operations<typeof WORKSPACE_BUDGET_ROUTES> = {
  listWorkspaceBudgets: async ({ principal, params, deps }) => workspaceBudgetsAnswer(await deps.service.listWorkspaceBudgets(orgOf(principal), workspaceRef(params))),
  getWorkspaceBudget: async ({ principal, params, deps }) => workspaceBudgetAnswer(await deps.service.getWorkspaceBudget(orgOf(principal), workspaceRef(params), interval(params))),
  upsertWorkspaceBudget: async ({ principal, params, body, deps }) => {
    const set = await deps.service.putWorkspaceBudget(orgOf(principal), workspaceRef(params), interval(params), {
      limitUsd: body.limit_usd,
      includeByokInBudgets: body.include_byok_in_budgets,
    });
    await deps.ledgerSeeds?.workspace(orgOf(principal), set.workspace.id);
    return workspaceBudgetAnswer(set);
  },
  deleteWorkspaceBudget: async ({ principal, params, deps }) => {
    await deps.service.deleteWorkspaceBudget(orgOf(principal), workspaceRef(params), interval(params));
    return { deleted: true };
  },
};
