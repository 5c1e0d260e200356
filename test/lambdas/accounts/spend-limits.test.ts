import { budgetInterval, budgetsWithPut, budgetsWithout, guardrailBudgetAfter, keyLimitAfter } from '../../../lambdas/accounts/spend-limits';
import type { StoredLimit } from '../../../lambdas/accounts/stored-limits';
import { DomainError } from '../../../lambdas/errors';

const T0 = '2026-11-23T00:00:00.000Z';
const NOW = '2026-11-25T10:00:00.000Z';

/** The refusal, in the common error body (docs/reference.md#the-common-error-body), a change throws, as `parameter: message`. */
function refusal(change: () => unknown): string {
  try {
    change();
  } catch (error) {
    if (!(error instanceof DomainError) || error.kind !== 'invalid_input') throw error;
    return `${(error.metadata as { parameter: string }).parameter}: ${error.message}`;
  }
  throw new Error('expected a refusal');
}

describe('keyLimitAfter', () => {
  const stored: StoredLimit = { amountUsd: '10', reset: 'weekly', since: T0 };

  it.each([
    ['nothing said: unchanged', stored, {}, undefined],
    ['a new limit: its window starts now', null, { amount: 5 }, { amountUsd: '5', reset: null, since: NOW }],
    ['a new limit with its interval', undefined, { amount: 5, reset: 'daily' as const }, { amountUsd: '5', reset: 'daily', since: NOW }],
    ['a new amount alone: the interval and the window kept', stored, { amount: 12.5 }, { amountUsd: '12.5', reset: 'weekly', since: T0 }],
    ['the same interval again: the window kept', stored, { reset: 'weekly' as const }, stored],
    ['a new interval alone: the amount kept, a new window', stored, { reset: 'monthly' as const }, { amountUsd: '10', reset: 'monthly', since: NOW }],
    ['no interval: all time, a new window', stored, { reset: null }, { amountUsd: '10', reset: null, since: NOW }],
    ['limit: null removes it', stored, { amount: null }, null],
    ['limit: null with a null interval removes it', stored, { amount: null, reset: null }, null],
    ['a null interval and no limit: nothing to reset', null, { reset: null }, null],
    ['-0 is a limit of 0', null, { amount: -0 }, { amountUsd: '0', reset: null, since: NOW }],
  ])('%s', (_case, current, request, expected) => {
    expect(keyLimitAfter(current, request, NOW)).toEqual(expected);
  });

  it.each([
    ['an interval without a limit', null, { reset: 'daily' as const }, 'limit_reset: Invalid limit_reset: needs a limit: give limit with it'],
    ['an interval with the limit removed', stored, { amount: null, reset: 'daily' as const }, 'limit_reset: Invalid limit_reset: needs a limit: give limit with it'],
    ['a negative amount', null, { amount: -1 }, 'limit: Invalid limit: must be 0 or more'],
    ['seven decimals', null, { amount: 1e-7 }, 'limit: Invalid limit: must have at most 6 decimal places'],
    ['1e308', null, { amount: 1e308 }, 'limit: Invalid limit: must be at most 1000000000'],
    ['NaN', null, { amount: Number.NaN }, 'limit: Invalid limit: must be a number'],
  ])('refuses %s, naming the field', (_case, current, request, expected) => {
    expect(refusal(() => keyLimitAfter(current, request, NOW))).toBe(expected);
  });
});

describe('guardrailBudgetAfter', () => {
  const stored: StoredLimit = { amountUsd: '50', reset: 'monthly', since: T0 };

  it.each([
    ['nothing said: unchanged', stored, {}, undefined],
    ['both given: a new budget from now', null, { amount: 50, reset: 'daily' as const }, { amountUsd: '50', reset: 'daily', since: NOW }],
    ['an amount alone completed by the stored interval, its window kept', stored, { amount: 60 }, { amountUsd: '60', reset: 'monthly', since: T0 }],
    ['an interval alone completed by the stored amount, a new window', stored, { reset: 'weekly' as const }, { amountUsd: '50', reset: 'weekly', since: NOW }],
    ['both null: removed', stored, { amount: null, reset: null }, null],
    ['both null without a budget: none', undefined, { amount: null, reset: null }, null],
  ])('%s', (_case, current, request, expected) => {
    expect(guardrailBudgetAfter(current, request, NOW)).toEqual(expected);
  });

  it.each([
    ['an amount without an interval anywhere', null, { amount: 5 }, 'reset_interval: Invalid reset_interval: is required with limit_usd: a guardrail budget has both'],
    ['an interval without an amount anywhere', null, { reset: 'daily' as const }, 'limit_usd: Invalid limit_usd: is required with reset_interval: a guardrail budget has both'],
    ['a null amount leaving the stored interval', stored, { amount: null }, 'reset_interval: Invalid reset_interval: must be null with a null limit_usd: both null remove the budget'],
    ['a null interval leaving the stored amount', stored, { reset: null }, 'limit_usd: Invalid limit_usd: must be null with a null reset_interval: both null remove the budget'],
    ['an amount of 0', stored, { amount: 0 }, 'limit_usd: Invalid limit_usd: must be greater than 0'],
    ['an amount of -0', stored, { amount: -0 }, 'limit_usd: Invalid limit_usd: must be greater than 0'],
  ])('refuses %s, naming the field', (_case, current, request, expected) => {
    expect(refusal(() => guardrailBudgetAfter(current, request, NOW))).toBe(expected);
  });
});

describe("a workspace's budgets", () => {
  const ids = () => {
    let n = 0;
    return () => `budget-${++n}`;
  };

  it('adds a budget with a new id, and changes one keeping its id and creation time', () => {
    const first = budgetsWithPut(undefined, 'monthly', 100, T0, ids());
    expect(first).toEqual({ monthly: { id: 'budget-1', amountUsd: '100', createdAt: T0, updatedAt: T0 } });

    expect(budgetsWithPut(first, 'monthly', 80.5, NOW, ids())).toEqual({ monthly: { id: 'budget-1', amountUsd: '80.5', createdAt: T0, updatedAt: NOW } });
  });

  it("keeps what the last change of the amount found of the holds out while the amount stays, never past a new amount (the store records that one with its caps)", () => {
    const heldAtChange = { periods: ['m2026-11', 'm2026-12'], fit: true };
    const recorded = { monthly: { id: 'budget-1', amountUsd: '100', createdAt: T0, updatedAt: T0, heldAtChange } };
    expect(budgetsWithPut(recorded, 'monthly', 100, NOW, ids()).monthly).toEqual({ ...recorded.monthly, updatedAt: NOW });
    expect(budgetsWithPut(recorded, 'monthly', 50, NOW, ids()).monthly).toEqual({ id: 'budget-1', amountUsd: '50', createdAt: T0, updatedAt: NOW });
  });

  it('keeps every wider interval larger than every narrower one, equal amounts refused', () => {
    let budgets = budgetsWithPut(undefined, 'weekly', 10, T0, ids());
    budgets = budgetsWithPut(budgets, 'lifetime', 1000, T0, ids());

    expect(refusal(() => budgetsWithPut(budgets, 'daily', 10, NOW, ids()))).toBe('limit_usd: Invalid limit_usd: must be less than the weekly budget (10): lifetime > monthly > weekly > daily');
    expect(refusal(() => budgetsWithPut(budgets, 'monthly', 5, NOW, ids()))).toBe('limit_usd: Invalid limit_usd: must be more than the weekly budget (10): lifetime > monthly > weekly > daily');
    expect(refusal(() => budgetsWithPut(budgets, 'monthly', 1000, NOW, ids()))).toBe('limit_usd: Invalid limit_usd: must be less than the lifetime budget (1000): lifetime > monthly > weekly > daily');
    expect(Object.keys(budgetsWithPut(budgets, 'monthly', 999.999999, NOW, ids()))).toEqual(['weekly', 'lifetime', 'monthly']);
  });

  it('refuses an amount that is not greater than 0, or has more than six decimals', () => {
    expect(refusal(() => budgetsWithPut(undefined, 'daily', 0, NOW, ids()))).toBe('limit_usd: Invalid limit_usd: must be greater than 0');
    expect(refusal(() => budgetsWithPut(undefined, 'daily', 1e-9, NOW, ids()))).toBe('limit_usd: Invalid limit_usd: must have at most 6 decimal places');
  });

  it('removes a budget, and says so when there is none to remove', () => {
    const budgets = budgetsWithPut(undefined, 'daily', 1, T0, ids());
    expect(budgetsWithout(budgets, 'daily')).toEqual({});
    expect(budgetsWithout(budgets, 'weekly')).toBeUndefined();
    expect(budgetsWithout(undefined, 'daily')).toBeUndefined();
  });

  it('reads an interval of the path, and refuses any other value with a 400', () => {
    expect(budgetInterval('lifetime')).toBe('lifetime');
    expect(refusal(() => budgetInterval('yearly'))).toBe('interval: Invalid interval: must be one of daily, weekly, monthly, lifetime');
    expect(refusal(() => budgetInterval('constructor'))).toBe('interval: Invalid interval: must be one of daily, weekly, monthly, lifetime');
  });
});
