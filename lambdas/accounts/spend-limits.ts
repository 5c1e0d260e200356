import { invalidParameter } from '../errors';
import { BUDGET_INTERVALS, limitAmount, nextLimit, type BudgetInterval, type ResetInterval, type StoredLimit, type WorkspaceBudget, type WorkspaceBudgets } from './stored-limits';
import { compare } from '../usd';

/**
 * How a request changes a spending limit (docs/limits.md): a key's limit, a guardrail's budget, one
 * of a workspace's budgets. Each function computes the limit from the record as the write that
 * stores it read it (the store applies it to a fresh read, under that read's revision), so two
 * changes at once never lose each other. Amounts come as the request's JSON numbers and are
 * checked here ({@link limitAmount}), with the field the request named.
 */

/** A limit as a request states it: a field absent leaves the stored one as it is, `null` clears it. */
export interface LimitRequest {
  amount?: number | null;
  reset?: ResetInterval | null;
}

/** The amount a request gives: undefined (not given), null (cleared), or an exact decimal. */
function requestedAmount(amount: number | null | undefined, field: string, positive: boolean): string | null | undefined {
  return amount === undefined || amount === null ? amount : limitAmount(amount, field, { positive });
}

/**
 * A key's limit after a create or an update (`limit`, `limit_reset`): undefined when the request
 * changes neither. `limit: null` removes the limit; a reset interval without a limit, stored or
 * given, is a 400.
 */
export function keyLimitAfter(current: StoredLimit | null | undefined, request: LimitRequest, now: string): StoredLimit | null | undefined {
  if (request.amount === undefined && request.reset === undefined) return undefined;
  const given = requestedAmount(request.amount, 'limit', false);
  const amountUsd = given !== undefined ? given : (current?.amountUsd ?? null);
  if (amountUsd === null) {
    if (request.reset != null) throw invalidParameter('limit_reset', 'needs a limit: give limit with it');
    return null;
  }
  const reset = request.reset !== undefined ? request.reset : (current?.reset ?? null);
  return nextLimit(current, { amountUsd, reset }, now);
}

/**
 * A guardrail's budget after a create or an update (`limit_usd`, `reset_interval`): undefined when
 * the request changes neither. A budget has both, so a request that would leave one without the
 * other is a 400; both null remove it.
 */
export function guardrailBudgetAfter(current: StoredLimit | null | undefined, request: LimitRequest, now: string): StoredLimit | null | undefined {
  if (request.amount === undefined && request.reset === undefined) return undefined;
  const given = requestedAmount(request.amount, 'limit_usd', true);
  const amountUsd = given !== undefined ? given : (current?.amountUsd ?? null);
  const reset = request.reset !== undefined ? request.reset : (current?.reset ?? null);
  if (amountUsd === null && reset === null) return null;
  if (amountUsd === null) {
    throw request.amount === null
      ? invalidParameter('reset_interval', 'must be null with a null limit_usd: both null remove the budget')
      : invalidParameter('limit_usd', 'is required with reset_interval: a guardrail budget has both');
  }
  if (reset === null) {
    throw request.reset === null
      ? invalidParameter('limit_usd', 'must be null with a null reset_interval: both null remove the budget')
      : invalidParameter('reset_interval', 'is required with limit_usd: a guardrail budget has both');
  }
  return nextLimit(current, { amountUsd, reset }, now);
}

/** `{interval}` of `/workspaces/{id}/budgets/{interval}`; anything else is a 400. */
export function budgetInterval(value: string | undefined): BudgetInterval {
  if (!BUDGET_INTERVALS.includes(value as BudgetInterval)) throw invalidParameter('interval', `must be one of ${BUDGET_INTERVALS.join(', ')}`);
  return value as BudgetInterval;
}

/**
 * A workspace's budgets with the one of `interval` set to `limitUsd` (a number greater than 0):
 * an existing budget keeps its id and creation time, a new one gets `newId()`. A wider interval's
 * budget must stay larger than a narrower one's (lifetime > monthly > weekly > daily), as the
 * public API requires: otherwise a 400.
 */
export function budgetsWithPut(current: WorkspaceBudgets | undefined, interval: BudgetInterval, limitUsd: number, now: string, newId: () => string): WorkspaceBudgets {
  const amountUsd = limitAmount(limitUsd, 'limit_usd', { positive: true });
  const budget = changedBudget(current?.[interval], amountUsd, now) ?? { id: newId(), amountUsd, createdAt: now, updatedAt: now };
  const next: WorkspaceBudgets = { ...current, [interval]: budget };
  checkNarrowing(next, interval);
  return next;
}

/**
 * An existing budget at `amountUsd`. What the last change of its amount found of the holds out
 * stays only while the amount does: a store records a new one with the caps it writes
 * (lambdas/aws/dynamo-limit-caps.ts), and one that writes none leaves none.
 */
function changedBudget(budget: WorkspaceBudget | undefined, amountUsd: string, now: string): WorkspaceBudget | undefined {
  if (!budget) return undefined;
  const { heldAtChange, ...rest } = budget;
  return { ...rest, ...(heldAtChange && budget.amountUsd === amountUsd ? { heldAtChange } : {}), amountUsd, updatedAt: now };
}

/** A workspace's budgets without the one of `interval`; undefined when there is none to remove. */
export function budgetsWithout(current: WorkspaceBudgets | undefined, interval: BudgetInterval): WorkspaceBudgets | undefined {
  if (!current?.[interval]) return undefined;
  const { [interval]: _removed, ...rest } = current;
  return rest;
}

/** Every other budget of the workspace against the one just set: narrower ones smaller, wider ones larger. */
function checkNarrowing(budgets: WorkspaceBudgets, interval: BudgetInterval): void {
  const amount = budgets[interval]!.amountUsd;
  const position = BUDGET_INTERVALS.indexOf(interval);
  BUDGET_INTERVALS.forEach((other, index) => {
    const budget = budgets[other];
    if (!budget || index === position) return;
    const order = compare(amount, budget.amountUsd);
    if (index < position && order <= 0) throw invalidParameter('limit_usd', `must be more than the ${other} budget (${budget.amountUsd}): lifetime > monthly > weekly > daily`);
    if (index > position && order >= 0) throw invalidParameter('limit_usd', `must be less than the ${other} budget (${budget.amountUsd}): lifetime > monthly > weekly > daily`);
  });
}
