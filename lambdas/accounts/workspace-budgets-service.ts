import { NotFoundError } from '../errors';
import type { Clock, IdGenerator } from '../clock';
import { BUDGET_INTERVALS, type BudgetInterval, type WorkspaceBudget } from './stored-limits';
import type { AccountStore } from './account-store';
import { budgetsWithPut, budgetsWithout } from './spend-limits';
import type { Workspace } from './types';

/** One interval's budget of a workspace, with the workspace it is of. */
export interface WorkspaceBudgetOf {
  workspace: Workspace;
  interval: BudgetInterval;
  budget: WorkspaceBudget;
}

/**
 * A workspace's budgets (docs/limits.md), the workspace named by its id or its slug as the public
 * `/workspaces/{id}/budgets` names it. Every change is one change of the workspace record with its
 * copies, computed from a fresh read (spend-limits.ts): changes of different intervals at once
 * all land, and each is checked against what the others left.
 */
export class WorkspaceBudgetsService {
  constructor(
    private readonly store: AccountStore,
    private readonly clock: Clock,
    private readonly newId: IdGenerator,
  ) {}

  /** The workspace's budgets, narrowest interval first. */
  async list(organizationId: string, idOrSlug: string): Promise<{ workspace: Workspace; budgets: WorkspaceBudgetOf[] }> {
    const workspace = await this.workspace(organizationId, idOrSlug);
    const budgets = BUDGET_INTERVALS.flatMap((interval) => {
      const budget = workspace.budgets?.[interval];
      return budget ? [{ workspace, interval, budget }] : [];
    });
    return { workspace, budgets };
  }

  /** One interval's budget; a 404 when the workspace has none. */
  async get(organizationId: string, idOrSlug: string, interval: BudgetInterval): Promise<WorkspaceBudgetOf> {
    const workspace = await this.workspace(organizationId, idOrSlug);
    const budget = workspace.budgets?.[interval];
    if (!budget) throw new NotFoundError(`Workspace ${workspace.id} has no ${interval} budget`);
    return { workspace, interval, budget };
  }

  /** A new budget for the interval, or a new amount for the one there; the workspace-wide bring-your-own-key flag when given. */
  async put(organizationId: string, idOrSlug: string, interval: BudgetInterval, input: { limitUsd: number; includeByokInBudgets?: boolean }): Promise<WorkspaceBudgetOf> {
    const { id } = await this.workspace(organizationId, idOrSlug);
    const now = this.clock.now().toISOString();
    const workspace = await this.store.changeWorkspaceBudgets(
      organizationId,
      id,
      (current) => ({ budgets: budgetsWithPut(current.budgets, interval, input.limitUsd, now, this.newId), includeByokInBudgets: input.includeByokInBudgets }),
      now,
    );
    if (!workspace) throw new NotFoundError(`Workspace ${id} not found`);
    return { workspace, interval, budget: workspace.budgets![interval]! };
  }

  /** Removes the interval's budget; one the workspace does not have is removed already (nothing is written). */
  async delete(organizationId: string, idOrSlug: string, interval: BudgetInterval): Promise<void> {
    const { id } = await this.workspace(organizationId, idOrSlug);
    const without = (current: Workspace) => {
      const budgets = budgetsWithout(current.budgets, interval);
      return budgets && { budgets };
    };
    if (!(await this.store.changeWorkspaceBudgets(organizationId, id, without, this.clock.now().toISOString()))) throw new NotFoundError(`Workspace ${id} not found`);
  }

  private async workspace(organizationId: string, idOrSlug: string): Promise<Workspace> {
    const workspace = await this.store.findWorkspace(organizationId, idOrSlug);
    if (!workspace) throw new NotFoundError(`Workspace ${idOrSlug} not found`);
    return workspace;
  }
}
