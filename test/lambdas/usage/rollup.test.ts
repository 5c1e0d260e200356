import { RollupError, rollUpUsage } from '../../../lambdas/usage/rollup';
import { FixedClock } from '../../support/fixed-clock';

/** The rollup over a folder whose folds end in another order than they began, as DynamoDB's answers do. */
describe('the usage rollup', () => {
  const organizations = Array.from({ length: 6 }, (_, i) => ({ id: `org-${i}` }));
  const folder = (fail: ReadonlySet<string> = new Set()) => ({
    foldOrganization: async (id: string) => {
      const i = Number(id.slice(4));
      await new Promise((resolve) => setTimeout(resolve, (organizations.length - i) * 5));
      if (fail.has(id)) throw new Error('throttled');
      return ['2026-11-20', '2026-11-21'].slice(0, 1 + (i % 2));
    },
    buildPopularity: async () => new Map([['acme/chat', { requests: 1, tokens: 1 }]]),
  });

  const died = { recordDied: async () => ({ recorded: 2, failed: new Set<string>() }) };

  it('counts every organization day folded, whichever fold ends first', async () => {
    const summary = await rollUpUsage({ organizations: async () => organizations, folder: folder(), died, clock: new FixedClock() });
    expect(summary).toEqual({ organizations: 6, days: 9, models: 1, died: 2 });
  });

  it('records the completions that died before it folds a day: an organization one of whose it could not record is not folded, and nothing is when it cannot read them', async () => {
    const order: string[] = [];
    const folding = folder();
    const watched = { ...folding, foldOrganization: async (id: string) => (order.push(`fold ${id}`), folding.foldOrganization(id)) };
    const recording = { recordDied: async () => (order.push('died'), { recorded: 0, failed: new Set<string>() }) };
    await rollUpUsage({ organizations: async () => organizations.slice(0, 2), folder: watched, died: recording, clock: new FixedClock() });
    expect(order).toEqual(['died', 'fold org-0', 'fold org-1']);
    order.length = 0;
    // One of org-1's could not be recorded: org-1 waits for the next run, the others fold.
    const partly = { recordDied: async () => ({ recorded: 3, failed: new Set(['org-1']) }) };
    const error = await rollUpUsage({ organizations: async () => organizations.slice(0, 3), folder: watched, died: partly, clock: new FixedClock() }).catch((e: unknown) => e);
    expect(order.sort()).toEqual(['fold org-0', 'fold org-2']);
    expect((error as RollupError).failed).toEqual(['org-1']);
    expect((error as RollupError).summary).toMatchObject({ organizations: 3, died: 3 });
    order.length = 0;
    const failing = { recordDied: () => Promise.reject(new Error('throttled')) };
    await expect(rollUpUsage({ organizations: async () => organizations, folder: watched, died: failing, clock: new FixedClock() })).rejects.toThrow('throttled');
    expect(order).toEqual([]);
  });

  it('folds the others when one fails, then fails naming it, with what the others folded', async () => {
    const error = await rollUpUsage({ organizations: async () => organizations, folder: folder(new Set(['org-3'])), died, clock: new FixedClock() }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RollupError);
    expect((error as RollupError).failed).toEqual(['org-3']);
    expect((error as RollupError).summary).toEqual({ organizations: 6, days: 7, models: 1, died: 2 });
  });
});
