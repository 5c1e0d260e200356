import type { Guardrail, Principal, Workspace } from '../accounts/types';
import { periodAt, windowOf, type SpendWindow } from './periods';
import { BUDGET_INTERVALS, type BudgetInterval, type HeldAtChange, type StoredLimit } from '../accounts/stored-limits';

/** Whose spend a limit counts: one key's, or everything a workspace's keys spend. */
export type SpendScope = { kind: 'key'; organizationId: string; keyHash: string } | { kind: 'workspace'; organizationId: string; workspaceId: string };

/** Which of the three kinds a limit is: a workspace budget, a guardrail budget, or the key's limit (a 402's `metadata.layer`). */
export type LimitKind = 'workspace_budget' | 'guardrail_budget' | 'key_limit';

/**
 * One limit a request must fit (docs/limits.md, "Glossary"): a budget of the key's workspace,
 * the budget of a guardrail on the key or its workspace, or the key's own limit.
 */
export interface SpendingLimit {
  kind: LimitKind;
  /** The limit's id: the workspace budget's, the guardrail's, the key's hash. */
  id: string;
  /** The ledger that counts this limit's spend (ledgers.ts): the same for as long as the limit's window is. */
  ledger: string;
  scope: SpendScope;
  window: SpendWindow;
  interval: BudgetInterval;
  amountUsd: string;
  /** When the limit began to count this scope's spend; what the scope spent earlier in the period counts too. */
  since: string;
  /** When the scope began: it spent nothing before. */
  scopeCreatedAt: string;
  /** The limit in words, for a refusal: `the workspace's monthly budget`. */
  description: string;
  /** Whether holds granted under an amount before its last change fit this one (a key's limit, a workspace's budget). */
  heldAtChange?: HeldAtChange;
}

/**
 * Every limit the principal's requests must fit, in the order they are checked: the workspace's
 * budgets, then the budget of each guardrail on the workspace or the key, then the key's limit.
 * A guardrail applies to the key through each assignment, its key's and its workspace's: an
 * assignment is a limit of its own, counting from when it was made.
 */
export function spendingLimits(principal: Pick<Principal, 'key' | 'workspace'>, guardrails: readonly Guardrail[]): SpendingLimit[] {
  const { key, workspace } = principal;
  const organizationId = key.organizationId;
  const keyScope: SpendScope = { kind: 'key', organizationId, keyHash: key.hash };
  const limits: SpendingLimit[] = workspace ? workspaceLimits(workspace) : [];
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
    limits.push({
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
  if (key.limit) limits.push(keyLimitOf(key.hash, organizationId, key.limit, key.createdAt));
  return limits;
}

/** Every scope a principal's requests spend in: its key's, and its workspace's when the key is in one. */
export function requestScopes(principal: Pick<Principal, 'key' | 'workspace'>): SpendScope[] {
  const { key, workspace } = principal;
  const scopes: SpendScope[] = [{ kind: 'key', organizationId: key.organizationId, keyHash: key.hash }];
  if (workspace) scopes.push({ kind: 'workspace', organizationId: key.organizationId, workspaceId: workspace.id });
  return scopes;
}

/** A workspace's budgets as limits, daily to lifetime: a pooled limit on what its keys spend. */
export function workspaceLimits(workspace: Pick<Workspace, 'id' | 'organizationId' | 'budgets' | 'createdAt'>): SpendingLimit[] {
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
        ...(budget.heldAtChange ? { heldAtChange: budget.heldAtChange } : {}),
      },
    ];
  });
}

/**
 * Whether a ledger of the limit for the period at `at` starts from what the scope had spent:
 * when the limit began during the period, after the scope itself. A limit that has counted since
 * the period (or the scope) began starts at nothing.
 */
export function startsFromSpend(limit: Pick<SpendingLimit, 'window' | 'since' | 'scopeCreatedAt'>, at: Date): boolean {
  const start = periodAt(limit.window, at).start?.toISOString() ?? '';
  const countedFrom = start > limit.scopeCreatedAt ? start : limit.scopeCreatedAt;
  return limit.since > countedFrom;
}

/** A key's own limit as a limit its requests must fit. */
export function keyLimitOf(keyHash: string, organizationId: string, limit: StoredLimit, createdAt: string): SpendingLimit {
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
    ...(limit.heldAtChange ? { heldAtChange: limit.heldAtChange } : {}),
  };
}

const later = (a: string, b: string | undefined) => (b !== undefined && b > a ? b : a);
