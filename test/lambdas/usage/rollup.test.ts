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

  it('counts every organization day folded, whichever fold ends first', async () => {
    const summary = await rollUpUsage({ organizations: async () => organizations, folder: folder(), clock: new FixedClock() });
    expect(summary).toEqual({ organizations: 6, days: 9, models: 1 });
  });

  it('folds the others when one fails, then fails naming it, with what the others folded', async () => {
    const error = await rollUpUsage({ organizations: async () => organizations, folder: folder(new Set(['org-3'])), clock: new FixedClock() }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RollupError);
    expect((error as RollupError).failed).toEqual(['org-3']);
    expect((error as RollupError).summary).toEqual({ organizations: 6, days: 7, models: 1 });
  });
});
