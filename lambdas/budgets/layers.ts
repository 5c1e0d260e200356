import type { Guardrail, Principal, Workspace } from '../accounts/types';
import { periodAt, windowOf, type BudgetWindow } from './periods';
import { BUDGET_INTERVALS, type BudgetInterval, type SpendCap } from '../accounts/spend-caps';

/** Whose spend a layer counts: one key's, or everything a workspace's keys spend. */
export type SpendScope = { kind: 'key'; organizationId: string; keyHash: string } | { kind: 'workspace'; organizationId: string; workspaceId: string };

/** Which of the three layers a cap is: a workspace budget, a guardrail budget, or the key's limit. */
export type LayerKind = 'workspace_budget' | 'guardrail_budget' | 'key_limit';

/**
 * One cap a request must fit (docs/limits.md, "Three layers"): a budget of the key's workspace,
 * the budget of a guardrail on the key or its workspace, or the key's own limit.
 */
export interface BudgetLayer {
  kind: LayerKind;
  /** The layer's id: the workspace budget's, the guardrail's, the key's hash. */
  id: string;
  /** The ledger that counts this layer's spend (budget-ledgers.ts): the same for as long as the layer's window is. */
  ledger: string;
  scope: SpendScope;
  window: BudgetWindow;
  interval: BudgetInterval;
  amountUsd: string;
  /** When the layer began to count this scope's spend; what the scope spent earlier in the period counts too. */
  since: string;
  /** When the scope began: it spent nothing before. */
  scopeCreatedAt: string;
  /** The layer in words, for a refusal: `the workspace's monthly budget`. */
  description: string;
}

/**
 * Every layer the principal's requests must fit, in the order they are checked: the workspace's
 * budgets, then the budget of each guardrail on the workspace or the key, then the key's limit.
 * A guardrail applies to the key through each assignment, its key's and its workspace's: an
 * assignment is a layer of its own, counting from when it was made.
 */
export function budgetLayers(principal: Pick<Principal, 'key' | 'workspace'>, guardrails: readonly Guardrail[]): BudgetLayer[] {
  const { key, workspace } = principal;
  const organizationId = key.organizationId;
  const keyScope: SpendScope = { kind: 'key', organizationId, keyHash: key.hash };
  const layers: BudgetLayer[] = workspace ? workspaceBudgetLayers(workspace) : [];
  const byId = new Map(guardrails.map((guardrail) => [guardrail.id, guardrail]));
  const assignments = [
    ...(workspace?.guardrailIds ?? []).map((id) => ({ id, at: workspace?.guardrailAssignedAt?.[id] })),
    ...key.guardrailIds.map((id) => ({ id, at: key.guardrailAssignedAt?.[id] })),
  ];
  const seen = new Set<string>();
  for (const assignment of assignments) {
    const guardrail = byId.get(assignment.id);
    const budget = guardrail?.budget;
    if (!guardrail || !budget) continue;
    const since = later(budget.since, assignment.at);
    const ledger = `G#${guardrail.id}#K#${key.hash}#${since}`;
    if (seen.has(ledger)) continue;
    seen.add(ledger);
    layers.push({
      kind: 'guardrail_budget',
      id: guardrail.id,
      ledger,
      scope: keyScope,
      window: windowOf(budget.reset),
      interval: budget.reset ?? 'lifetime',
      amountUsd: budget.amountUsd,
      since,
      scopeCreatedAt: key.createdAt,
      description: `the ${budget.reset ?? 'lifetime'} budget of guardrail ${JSON.stringify(guardrail.name)}`,
    });
  }
  if (key.limit) layers.push(keyLimitLayer(key.hash, organizationId, key.limit, key.createdAt));
  return layers;
}

/** A workspace's budgets as layers, daily to lifetime: a pooled cap on what its keys spend. */
export function workspaceBudgetLayers(workspace: Pick<Workspace, 'id' | 'organizationId' | 'budgets' | 'createdAt'>): BudgetLayer[] {
  const { organizationId } = workspace;
  const scope: SpendScope = { kind: 'workspace', organizationId, workspaceId: workspace.id };
  return BUDGET_INTERVALS.flatMap((interval) => {
    const budget = workspace.budgets?.[interval];
    if (!budget) return [];
    return [
      {
        kind: 'workspace_budget' as const,
        id: budget.id,
        ledger: `W#${organizationId}#${workspace.id}#${interval}#${budget.createdAt}`,
        scope,
        window: windowOf(interval === 'lifetime' ? null : interval),
        interval,
        amountUsd: budget.amountUsd,
        since: budget.createdAt,
        scopeCreatedAt: workspace.createdAt,
        description: interval === 'lifetime' ? "the workspace's lifetime budget" : `the workspace's ${interval} budget`,
      },
    ];
  });
}

/**
 * Whether a ledger of the layer for the period at `at` starts from what the scope had spent:
 * when the layer began during the period, after the scope itself. A layer that has counted since
 * the period (or the scope) began starts at nothing.
 */
export function startsFromSpend(layer: Pick<BudgetLayer, 'window' | 'since' | 'scopeCreatedAt'>, at: Date): boolean {
  const start = periodAt(layer.window, at).start?.toISOString() ?? '';
  const countedFrom = start > layer.scopeCreatedAt ? start : layer.scopeCreatedAt;
  return layer.since > countedFrom;
}

function keyLimitLayer(keyHash: string, organizationId: string, limit: SpendCap, createdAt: string): BudgetLayer {
  return {
    kind: 'key_limit',
    id: keyHash,
    ledger: `K#${keyHash}#${limit.since}`,
    scope: { kind: 'key', organizationId, keyHash },
    window: windowOf(limit.reset),
    interval: limit.reset ?? 'lifetime',
    amountUsd: limit.amountUsd,
    since: limit.since,
    scopeCreatedAt: createdAt,
    description: limit.reset ? `the key's ${limit.reset} limit` : "the key's limit",
  };
}

const later = (a: string, b: string | undefined) => (b !== undefined && b > a ? b : a);
