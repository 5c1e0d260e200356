import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { averageTokenPrice, effectivePricing, validatePricing } from '../../../lambdas/catalog/pricing';
import type { PublicModel } from '../../../lambdas/catalog/types';

const snapshot: { data: PublicModel[] } = JSON.parse(
  readFileSync(join(__dirname, '../../../data/catalog-snapshot.json'), 'utf8'),
);

describe('the real catalog snapshot', () => {
  const models = snapshot.data;
  const instants = [
    '2026-05-31T23:59:59Z',
    '2026-06-01T00:00:00Z',
    '2026-06-01T00:59:00Z',
    '2026-06-01T01:00:00Z',
    '2026-06-01T04:00:00Z',
    '2026-06-01T06:00:00Z',
    '2026-06-01T10:00:00Z',
    '2026-06-03T15:30:00Z',
  ].map((iso) => new Date(iso));
  const promptTokenCounts = [0, 32000, 200001, 2000000];

  it('holds 421 models, 60 of them with overrides', () => {
    expect(models).toHaveLength(421);
    expect(models.filter((m) => m.pricing.overrides !== undefined)).toHaveLength(60);
  });

  it('passes validatePricing for every model', () => {
    const problems = models.flatMap((m) => validatePricing(m.pricing).map((p) => `${m.id}: ${p}`));

    expect(problems).toEqual([]);
  });

  it('prices every model at every instant and prompt size without throwing', () => {
    for (const model of models) {
      for (const at of instants) {
        for (const promptTokens of promptTokenCounts) {
          const result = effectivePricing(model.pricing, { promptTokens, at });

          expect(typeof result.prompt).toBe('string');
          expect(typeof result.completion).toBe('string');
        }
      }
    }
  });

  it('follows the time-of-day overrides of a real model (deepseek-v4-flash-vision-exp)', () => {
    const model = models.find((m) => m.id === 'deepseek/deepseek-v4-flash-vision-exp');
    const at = (iso: string) => effectivePricing(model!.pricing, { promptTokens: 0, at: new Date(iso) }).prompt;

    expect(at('2026-06-01T00:59:00Z')).toBe('0.00000022');
    expect(at('2026-06-01T01:00:00Z')).toBe('0.00000044');
    expect(at('2026-06-01T04:00:00Z')).toBe('0.00000022');
    expect(at('2026-06-01T06:00:00Z')).toBe('0.00000044');
    expect(at('2026-06-01T10:00:00Z')).toBe('0.00000022');
  });

  it('gives every router model an unknown average price and every other model a number', () => {
    const unknown = models.filter((m) => averageTokenPrice(m.pricing) === null).map((m) => m.id);

    expect(unknown.sort()).toEqual([
      'openrouter/auto',
      'openrouter/auto-beta',
      'openrouter/bodybuilder',
      'openrouter/fusion',
      'openrouter/pareto-code',
    ]);
  });
});
