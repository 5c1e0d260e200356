import type { ApiKeyRecord, Guardrail, Workspace } from '../../../lambdas/accounts/types';
import { spendingLimits } from '../../../lambdas/spending/limits';

describe('the limits a request must fit', () => {
  const base = { organizationId: 'org', createdAt: '2026-01-01T00:00:00.000Z', updatedAt: null };
  const key = (fields: Partial<ApiKeyRecord> = {}): ApiKeyRecord => ({
    ...base,
    hash: 'a'.repeat(64),
    kind: 'workspace',
    workspaceId: 'ws',
    accessLevel: null,
    userId: null,
    name: 'k',
    label: 'sk-…',
    disabled: false,
    guardrailIds: [],
    expiresAt: null,
    ...fields,
  });
  const workspace = (fields: Partial<Workspace> = {}): Workspace => ({ ...base, id: 'ws', name: 'w', slug: 'w', description: null, guardrailIds: [], ...fields });
  const guardrail = (id: string, budget: Guardrail['budget']): Guardrail => ({
    ...base,
    id,
    workspaceId: null,
    name: `guardrail ${id}`,
    description: null,
    allowedModels: null,
    ignoredModels: null,
    allowedProviders: null,
    ignoredProviders: null,
    enforceZdr: false,
    budget,
  });

  it('has none for a key without limits, and puts workspace budgets, guardrail budgets and the key limit in that order', () => {
    expect(spendingLimits({ key: key(), workspace: workspace() }, [])).toEqual([]);
    const limits = spendingLimits(
      {
        key: key({ guardrailIds: ['g1'], limit: { amountUsd: '5', reset: null, since: '2026-02-01T00:00:00.000Z' } }),
        workspace: workspace({ budgets: { lifetime: { id: 'b2', amountUsd: '9', createdAt: '2026-03-01T00:00:00.000Z', updatedAt: '2026-03-01T00:00:00.000Z' }, daily: { id: 'b1', amountUsd: '1', createdAt: '2026-03-01T00:00:00.000Z', updatedAt: '2026-03-01T00:00:00.000Z' } } }),
      },
      [guardrail('g1', { amountUsd: '2', reset: 'weekly', since: '2026-02-10T00:00:00.000Z' })],
    );
    expect(limits.map((limit) => [limit.kind, limit.interval, limit.window, limit.amountUsd])).toEqual([
      ['workspace_budget', 'daily', 'day', '1'],
      ['workspace_budget', 'lifetime', 'all', '9'],
      ['guardrail_budget', 'weekly', 'week', '2'],
      ['key_limit', 'lifetime', 'all', '5'],
    ]);
    expect(limits[0]!.scope).toEqual({ kind: 'workspace', organizationId: 'org', workspaceId: 'ws' });
    expect(limits[2]!.scope).toEqual({ kind: 'key', organizationId: 'org', keyHash: 'a'.repeat(64) });
  });

  it('counts a guardrail budget from the later of the budget and the assignment, once per assignment, and a new window as a new ledger', () => {
    const budget = { amountUsd: '2', reset: 'daily' as const, since: '2026-02-10T00:00:00.000Z' };
    const both = spendingLimits(
      {
        key: key({ guardrailIds: ['g1'], guardrailAssignedAt: { g1: '2026-04-01T00:00:00.000Z' } }),
        workspace: workspace({ guardrailIds: ['g1'], guardrailAssignedAt: { g1: '2026-01-05T00:00:00.000Z' } }),
      },
      [guardrail('g1', budget)],
    );
    expect(both.map((limit) => limit.since)).toEqual(['2026-02-10T00:00:00.000Z', '2026-04-01T00:00:00.000Z']);
    expect(new Set(both.map((limit) => limit.ledger)).size).toBe(2);
    const reset = spendingLimits({ key: key({ guardrailIds: ['g1'] }), workspace: null }, [guardrail('g1', { ...budget, since: '2026-05-01T00:00:00.000Z' })]);
    expect(reset[0]!.ledger).not.toBe(both[0]!.ledger);
    // A guardrail without a budget, or one no longer there, is no limit.
    expect(spendingLimits({ key: key({ guardrailIds: ['g1', 'gone'] }), workspace: null }, [guardrail('g1', null)])).toEqual([]);
  });
});
