import {
  activityDates,
  formatUsd,
  guardrailBudgets,
  keyLimitBars,
  keysToChart,
  nextReset,
  niceCeiling,
  resetText,
  spendByKey,
  spendByModel,
  workspaceBudgets,
  type KeyUsageView,
} from '../../../web/settings/usage-model';

/** A Friday afternoon in UTC; the week began on Monday 2026-11-23. */
const NOW = new Date('2026-11-27T15:30:00Z');

function key(hash: string, fields: Partial<KeyUsageView> = {}): KeyUsageView {
  return {
    hash,
    name: `key ${hash}`,
    label: `sk-mg-v1-${hash}...`,
    kind: 'workspace',
    disabled: false,
    workspace_id: 'ws-1',
    guardrail_ids: [],
    usage: 0,
    usage_daily: 0,
    usage_weekly: 0,
    usage_monthly: 0,
    limit: null,
    limit_remaining: null,
    limit_reset: null,
    ...fields,
  };
}

describe('the usage section’s figures', () => {
  it('resets daily at the next UTC midnight, weekly on the next Monday, monthly on the 1st, lifetime never', () => {
    expect(nextReset('daily', NOW)?.toISOString()).toBe('2026-11-28T00:00:00.000Z');
    expect(nextReset('weekly', NOW)?.toISOString()).toBe('2026-11-30T00:00:00.000Z');
    expect(nextReset('monthly', NOW)?.toISOString()).toBe('2026-12-01T00:00:00.000Z');
    expect(nextReset(null, NOW)).toBeNull();
  });

  it('resets a week that begins now a week later, and December into January', () => {
    const mondayMidnight = new Date('2026-11-30T00:00:00Z');
    expect(nextReset('weekly', mondayMidnight)?.toISOString()).toBe('2026-12-07T00:00:00.000Z');
    expect(nextReset('daily', mondayMidnight)?.toISOString()).toBe('2026-12-01T00:00:00.000Z');
    const sundayNight = new Date('2026-12-27T23:59:59.999Z');
    expect(nextReset('weekly', sundayNight)?.toISOString()).toBe('2026-12-28T00:00:00.000Z');
    expect(nextReset('monthly', new Date('2026-12-31T23:00:00Z'))?.toISOString()).toBe('2027-01-01T00:00:00.000Z');
  });

  it('says when a cap resets in UTC, with its rule', () => {
    expect(resetText('weekly', nextReset('weekly', NOW))).toBe('Resets Mon 2026-11-30 00:00 UTC (every Monday)');
    expect(resetText('daily', nextReset('daily', NOW))).toBe('Resets Sat 2026-11-28 00:00 UTC (every day)');
    expect(resetText('monthly', nextReset('monthly', NOW))).toBe('Resets Tue 2026-12-01 00:00 UTC (on the 1st of every month)');
    expect(resetText(null, null)).toBe('Never resets (lifetime)');
  });

  it('shows cents from one cent up and three significant digits below', () => {
    expect([0, 0.01, 12.5, 1234.567, 0.0000135, 0.00000225, 0.004999].map(formatUsd)).toEqual(['$0.00', '$0.01', '$12.50', '$1,234.57', '$0.0000135', '$0.00000225', '$0.005']);
  });

  it('shows one amount summed in two orders alike', () => {
    const [one, other] = [0.000012 + 0.00000225, 0.0000135 + 0.00000075];
    expect(one).not.toBe(other);
    expect(formatUsd(one)).toBe(formatUsd(other));
  });

  it('covers the dates GET /activity answers for: the 30 days before today, and today', () => {
    const dates = activityDates(NOW);
    expect([dates.length, dates[0], dates[30]]).toEqual([31, '2026-10-28', '2026-11-27']);
  });

  it('tops the scale at a round amount at or above the largest day', () => {
    expect([0.0000135, 7, 10, 0.3, 1001, 0].map(niceCeiling)).toEqual([0.00002, 10, 10, 0.5, 2000, 1]);
  });

  it('charts the keys with the most spend this month, then all time, and only keys that spent', () => {
    const keys = [key('a', { usage: 5, usage_monthly: 1 }), key('b', { usage: 9, usage_monthly: 1 }), key('c', { usage: 1, usage_monthly: 3 }), key('d')];
    expect(keysToChart(keys, 2).map((entry) => entry.hash)).toEqual(['c', 'b']);
    expect(keysToChart(keys).map((entry) => entry.hash)).toEqual(['c', 'b', 'a']);
  });

  it('groups spend by model per day, the largest first, the rest as other models', () => {
    const dates = activityDates(NOW);
    const rows = [
      { date: '2026-11-27', model: 'm/a', usage: 1 },
      { date: '2026-11-27', model: 'm/a', usage: 0.5 },
      { date: '2026-11-26', model: 'm/b', usage: 2 },
      { date: '2026-11-27', model: 'm/c', usage: 0.25 },
      { date: '2026-01-01', model: 'm/c', usage: 100 },
    ];
    const spend = spendByModel(rows, dates, 2);
    expect(spend.series.map((entry) => [entry.name, entry.total, Object.fromEntries(entry.perDay)])).toEqual([
      ['m/b', 2, { '2026-11-26': 2 }],
      ['m/a', 1.5, { '2026-11-27': 1.5 }],
      ['Other models', 0.25, { '2026-11-27': 0.25 }],
    ]);
    expect(Object.fromEntries(spend.totals)).toEqual({ '2026-11-26': 2, '2026-11-27': 1.75 });
  });

  it('groups spend by key, what the charted keys did not spend being other keys, and float dust none', () => {
    const dates = activityDates(NOW);
    const organization = [
      { date: '2026-11-27', model: 'm/a', usage: 0.0000015 + 0.000012 + 0.00000075 },
      { date: '2026-11-26', model: 'm/a', usage: 3 },
    ];
    const charted = [
      { key: key('a'), rows: [{ date: '2026-11-27', model: 'm/a', usage: 0.0000015 }, { date: '2026-11-27', model: 'm/b', usage: 0.000012 }] },
      { key: key('b'), rows: [{ date: '2026-11-27', model: 'm/a', usage: 0.00000075 }] },
    ];
    const spend = spendByKey(organization, charted, dates);
    expect(spend.series.map((entry) => [entry.id, entry.detail, Object.fromEntries(entry.perDay)])).toEqual([
      ['a', 'sk-mg-v1-a...', { '2026-11-27': 0.0000015 + 0.000012 }],
      ['b', 'sk-mg-v1-b...', { '2026-11-27': 0.00000075 }],
      ['other', null, { '2026-11-26': 3 }],
    ]);
  });

  it('shows a key limit as spent in its window and the API’s limit_remaining', () => {
    const keys = [key('a', { name: 'b', limit: 5, limit_reset: 'daily', usage: 9, usage_daily: 2, limit_remaining: 3 }), key('n', { name: 'a', limit: 1, usage: 1.5, limit_remaining: 0 }), key('x')];
    expect(keyLimitBars(keys, NOW)).toEqual([
      { id: 'n', title: 'a', interval: null, limit: 1, spent: 1.5, left: 0, resetsAt: null },
      { id: 'a', title: 'b', interval: 'daily', limit: 5, spent: 2, left: 3, resetsAt: new Date('2026-11-28T00:00:00Z') },
    ]);
  });

  it('gives a guardrail budget one bar per covered key: assigned keys and its workspaces’ keys, management keys never', () => {
    const guardrails = [
      { id: 'g-1', name: 'Team', limit_usd: 2, reset_interval: 'weekly' as const },
      { id: 'g-2', name: 'No budget', limit_usd: null, reset_interval: null },
    ];
    const keys = [
      key('a', { name: 'assigned', workspace_id: 'ws-2', guardrail_ids: ['g-1'], usage_weekly: 0.5 }),
      key('b', { name: 'in workspace', usage_weekly: 2.5 }),
      key('m', { name: 'admin', kind: 'management' }),
      key('c', { name: 'elsewhere', workspace_id: 'ws-2' }),
    ];
    const workspaces = [{ id: 'ws-1', name: 'One', guardrail_ids: ['g-1'] }];
    const [budget, ...more] = guardrailBudgets(guardrails, keys, workspaces, NOW);
    expect(more).toEqual([]);
    expect(budget!.bars.map((bar) => [bar.title, bar.spent, bar.left, bar.resetsAt?.toISOString()])).toEqual([
      ['assigned', 0.5, 1.5, '2026-11-30T00:00:00.000Z'],
      ['in workspace', 2.5, 0, '2026-11-30T00:00:00.000Z'],
    ]);
  });

  it('pools a workspace budget over its keys’ spend in the window, narrowest interval first', () => {
    const keys = [key('a', { usage: 10, usage_monthly: 1 }), key('b', { usage: 5, usage_monthly: 2, disabled: true }), key('c', { workspace_id: 'ws-2', usage: 7, usage_monthly: 7 })];
    const workspaces = [{ id: 'ws-1', name: 'One', guardrail_ids: [] }, { id: 'ws-2', name: 'Two', guardrail_ids: [] }];
    const budgets = new Map([
      [
        'ws-1',
        [
          { id: 'life', workspace_id: 'ws-1', limit_usd: 100, reset_interval: null },
          { id: 'month', workspace_id: 'ws-1', limit_usd: 50, reset_interval: 'monthly' as const },
        ],
      ],
    ]);
    const [one, ...more] = workspaceBudgets(workspaces, budgets, keys, NOW);
    expect(more).toEqual([]);
    expect(one!.bars).toEqual([
      { id: 'month', title: 'Monthly budget', interval: 'monthly', limit: 50, spent: 3, left: 47, resetsAt: new Date('2026-12-01T00:00:00Z') },
      { id: 'life', title: 'Lifetime budget', interval: null, limit: 100, spent: 15, left: 85, resetsAt: null },
    ]);
  });
});
