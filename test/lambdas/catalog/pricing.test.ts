import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  averageTokenPrice,
  effectivePricing,
  validatePricing,
} from '../../../lambdas/catalog/pricing';
import { multiplyDecimal } from '../../../lambdas/decimal';
import type { PricingOverride, PublicModel, PublicPricing } from '../../../lambdas/catalog/types';

const snapshot: { data: PublicModel[] } = JSON.parse(
  readFileSync(join(__dirname, '../../../data/catalog-snapshot.json'), 'utf8'),
);

// 2026-06-01 is a Monday; 2026-05-31 a Sunday.
const MONDAY_NOON = new Date('2026-06-01T12:00:00Z');

const base: PublicPricing = { prompt: '0.000001', completion: '0.000002' };

function withOverrides(...overrides: PricingOverride[]): PublicPricing {
  return { ...base, overrides };
}

function promptAt(pricing: PublicPricing, at: string, promptTokens = 1000): string {
  return effectivePricing(pricing, { promptTokens, at: new Date(at) }).prompt;
}

describe('effectivePricing (docs/reference.md#pricing-and-cost)', () => {
  it('returns the base prices untouched when there are no overrides', () => {
    const pricing: PublicPricing = {
      prompt: '0.00000300',
      completion: '0.000015',
      input_cache_read: '0.0000003',
      web_search: '0.01',
    };

    const result = effectivePricing(pricing, { promptTokens: 10, at: MONDAY_NOON });

    expect(result).toEqual({
      prompt: '0.00000300',
      completion: '0.000015',
      input_cache_read: '0.0000003',
      web_search: '0.01',
    });
  });

  it('lists keys in PRICE_KEYS order and leaves out discount and overrides', () => {
    const pricing: PublicPricing = {
      web_search: '0.01',
      completion: '2',
      prompt: '1',
      discount: 0,
      overrides: [{ input_cache_read: '0.5' }],
    };

    const result = effectivePricing(pricing, { promptTokens: 0, at: MONDAY_NOON });

    expect(Object.keys(result)).toEqual(['prompt', 'completion', 'input_cache_read', 'web_search']);
  });

  describe('min_prompt_tokens applies only when prompt tokens are strictly greater', () => {
    const pricing = withOverrides({ min_prompt_tokens: 200000, prompt: '0.000002' });

    it.each([
      [0, '0.000001'],
      [199999, '0.000001'],
      [200000, '0.000001'],
      [200001, '0.000002'],
      [1000000, '0.000002'],
    ])('%d prompt tokens → prompt %s', (tokens, expected) => {
      expect(promptAt(pricing, '2026-06-01T12:00:00Z', tokens)).toBe(expected);
    });
  });

  describe('a daily window [utc_start, utc_end) includes its start and excludes its end', () => {
    const pricing = withOverrides({ utc_start: 100, utc_end: 400, prompt: '0.0000005' });

    it.each([
      ['2026-06-01T00:59:59.999Z', '0.000001'],
      ['2026-06-01T01:00:00Z', '0.0000005'],
      ['2026-06-01T02:30:00Z', '0.0000005'],
      ['2026-06-01T03:59:59.999Z', '0.0000005'],
      ['2026-06-01T04:00:00Z', '0.000001'],
    ])('at %s → prompt %s', (at, expected) => {
      expect(promptAt(pricing, at)).toBe(expected);
    });
  });

  describe('a window with minutes in its bounds (1030–1045)', () => {
    const pricing = withOverrides({ utc_start: 1030, utc_end: 1045, prompt: '0.0000005' });

    it.each([
      ['2026-06-01T10:29:59Z', '0.000001'],
      ['2026-06-01T10:30:00Z', '0.0000005'],
      ['2026-06-01T10:44:59Z', '0.0000005'],
      ['2026-06-01T10:45:00Z', '0.000001'],
    ])('at %s → prompt %s', (at, expected) => {
      expect(promptAt(pricing, at)).toBe(expected);
    });
  });

  describe('a window with utc_start > utc_end wraps past midnight (2300–0100)', () => {
    const pricing = withOverrides({ utc_start: 2300, utc_end: 100, prompt: '0.0000005' });

    it.each([
      ['2026-06-01T22:59:59Z', '0.000001'],
      ['2026-06-01T23:00:00Z', '0.0000005'],
      ['2026-06-01T23:59:00Z', '0.0000005'],
      ['2026-06-02T00:00:00Z', '0.0000005'],
      ['2026-06-02T00:59:00Z', '0.0000005'],
      ['2026-06-02T01:00:00Z', '0.000001'],
      ['2026-06-01T12:00:00Z', '0.000001'],
    ])('at %s → prompt %s', (at, expected) => {
      expect(promptAt(pricing, at)).toBe(expected);
    });
  });

  describe('edge-shaped windows', () => {
    it.each([
      ['utc_start equal to utc_end is an empty window', { utc_start: 600, utc_end: 600 }, '2026-06-01T06:00:00Z', false],
      ['0000–2400 is the whole day (start)', { utc_start: 0, utc_end: 2400 }, '2026-06-01T00:00:00Z', true],
      ['0000–2400 is the whole day (end)', { utc_start: 0, utc_end: 2400 }, '2026-06-01T23:59:59Z', true],
      ['only utc_end: the window starts at 0000', { utc_end: 400 }, '2026-06-01T00:00:00Z', true],
      ['only utc_end: the end stays exclusive', { utc_end: 400 }, '2026-06-01T04:00:00Z', false],
      ['only utc_start: the window ends at 2400', { utc_start: 2200 }, '2026-06-01T23:59:59Z', true],
      ['only utc_start: before the start', { utc_start: 2200 }, '2026-06-01T21:59:00Z', false],
    ] as const)('%s', (_name, window, at, applies) => {
      const pricing = withOverrides({ ...window, prompt: '0.0000005' });

      expect(promptAt(pricing, at)).toBe(applies ? '0.0000005' : '0.000001');
    });
  });

  describe('utc_days scopes the whole UTC day when no window is set', () => {
    const pricing = withOverrides({ utc_days: ['sunday'], prompt: '0.0000005' });

    it.each([
      ['Saturday 23:59:59', '2026-05-30T23:59:59Z', '0.000001'],
      ['Sunday 00:00', '2026-05-31T00:00:00Z', '0.0000005'],
      ['Sunday 23:59:59', '2026-05-31T23:59:59Z', '0.0000005'],
      ['Sunday 23:59:59.999', '2026-05-31T23:59:59.999Z', '0.0000005'],
      ['Monday 00:00', '2026-06-01T00:00:00Z', '0.000001'],
    ])('%s → prompt %s', (_name, at, expected) => {
      expect(promptAt(pricing, at)).toBe(expected);
    });
  });

  describe('utc_days scopes a window by the weekday of the request instant itself', () => {
    const pricing = withOverrides({ utc_days: ['sunday'], utc_start: 2300, utc_end: 100, prompt: '0.0000005' });

    it.each([
      ['Sunday 00:30 (after Saturday night, but it is Sunday)', '2026-05-31T00:30:00Z', '0.0000005'],
      ['Sunday 12:00 (outside the window)', '2026-05-31T12:00:00Z', '0.000001'],
      ['Sunday 23:00', '2026-05-31T23:00:00Z', '0.0000005'],
      ['Sunday 23:59:59', '2026-05-31T23:59:59Z', '0.0000005'],
      ['Monday 00:00 (inside the window, but Monday)', '2026-06-01T00:00:00Z', '0.000001'],
      ['Saturday 23:30 (inside the window, but Saturday)', '2026-05-30T23:30:00Z', '0.000001'],
    ])('%s → prompt %s', (_name, at, expected) => {
      expect(promptAt(pricing, at)).toBe(expected);
    });
  });

  it('applies an entry only when all its conditions hold', () => {
    const pricing = withOverrides({
      min_prompt_tokens: 1000,
      utc_days: ['monday'],
      utc_start: 900,
      utc_end: 1700,
      prompt: '0.0000005',
    });

    expect(promptAt(pricing, '2026-06-01T12:00:00Z', 1001)).toBe('0.0000005');
    expect(promptAt(pricing, '2026-06-01T12:00:00Z', 1000)).toBe('0.000001');
    expect(promptAt(pricing, '2026-06-01T18:00:00Z', 1001)).toBe('0.000001');
    expect(promptAt(pricing, '2026-06-02T12:00:00Z', 1001)).toBe('0.000001');
  });

  it('lets later applicable entries win per key while absent keys inherit', () => {
    const pricing: PublicPricing = {
      prompt: '1',
      completion: '2',
      input_cache_read: '0.1',
      overrides: [
        { min_prompt_tokens: 100, prompt: '10', completion: '20' },
        { min_prompt_tokens: 200, prompt: '100' },
        { min_prompt_tokens: 300, prompt: '1000', completion: '2000' },
        { utc_days: ['monday'], audio: '5' },
      ],
    };

    const result = effectivePricing(pricing, { promptTokens: 250, at: MONDAY_NOON });

    expect(result).toEqual({ prompt: '100', completion: '20', audio: '5', input_cache_read: '0.1' });
  });

  it('adds keys named only by an applicable override and not by one that does not apply', () => {
    const pricing = withOverrides({ utc_days: ['sunday'], input_cache_write: '0.3' }, { utc_days: ['monday'], audio: '0.2' });

    const result = effectivePricing(pricing, { promptTokens: 0, at: MONDAY_NOON });

    expect(result).toEqual({ prompt: '0.000001', completion: '0.000002', audio: '0.2' });
  });

  it('ignores a non-overridable key carried by an override', () => {
    const pricing = withOverrides({ request: '1' } as PricingOverride);

    expect(effectivePricing(pricing, { promptTokens: 0, at: MONDAY_NOON })).toEqual(base);
  });

  describe('an override with malformed conditions never applies', () => {
    it.each([
      ['minutes ≥ 60', { utc_start: 160 }],
      ['above 2400', { utc_end: 2500 }],
      ['negative', { utc_start: -100 }],
      ['not an integer', { utc_start: 100.5 }],
      ['empty utc_days', { utc_days: [] }],
      ['unknown weekday', { utc_days: ['funday'] }],
      ['NaN min_prompt_tokens', { min_prompt_tokens: Number.NaN }],
    ])('%s', (_name, condition) => {
      const pricing = withOverrides({ ...(condition as PricingOverride), prompt: '0.0000005' });

      expect(promptAt(pricing, '2026-06-01T12:00:00Z')).toBe('0.000001');
    });
  });

  describe('discount multiplies every price by (1 − discount) in exact decimal', () => {
    it.each([
      [0, { prompt: '0.0000003', completion: '0.00000150', web_search: '0.01' }],
      [0.1, { prompt: '0.00000027', completion: '0.00000135', web_search: '0.009' }],
      [0.35, { prompt: '0.000000195', completion: '0.000000975', web_search: '0.0065' }],
      [0.5, { prompt: '0.00000015', completion: '0.00000075', web_search: '0.005' }],
      [1, { prompt: '0', completion: '0', web_search: '0' }],
    ])('discount %d', (discount, expected) => {
      const pricing: PublicPricing = { prompt: '0.0000003', completion: '0.00000150', web_search: '0.01', discount };

      expect(effectivePricing(pricing, { promptTokens: 0, at: MONDAY_NOON })).toEqual(expected);
    });

    it('discounts the overriding price, not the base one', () => {
      const pricing: PublicPricing = {
        prompt: '0.000003',
        completion: '0.000015',
        discount: 0.2,
        overrides: [{ min_prompt_tokens: 10, prompt: '0.000006' }],
      };

      expect(effectivePricing(pricing, { promptTokens: 11, at: MONDAY_NOON })).toEqual({
        prompt: '0.0000048',
        completion: '0.000012',
      });
    });

    it('handles a discount that prints in exponent notation', () => {
      const pricing: PublicPricing = { prompt: '1', completion: '0', discount: 1e-7 };

      expect(effectivePricing(pricing, { promptTokens: 0, at: MONDAY_NOON })).toEqual({
        prompt: '0.9999999',
        completion: '0',
      });
    });

    it('leaves the router variable price "-1" as it is', () => {
      const pricing: PublicPricing = { prompt: '-1', completion: '-1', discount: 0.5 };

      expect(effectivePricing(pricing, { promptTokens: 0, at: MONDAY_NOON })).toEqual({ prompt: '-1', completion: '-1' });
    });

    it('throws a RangeError for a discount outside [0, 1]', () => {
      expect(() => effectivePricing({ ...base, discount: 1.5 }, { promptTokens: 0, at: MONDAY_NOON })).toThrow(
        new RangeError('pricing.discount 1.5 is outside [0, 1]'),
      );
    });
  });
});

describe('multiplyDecimal', () => {
  it.each([
    ['0.0000003', '0.9', '0.00000027'],
    ['0.0000003', '1', '0.0000003'],
    ['0.00000150', '1', '0.0000015'],
    ['12.5', '0.8', '10'],
    ['0', '1.6', '0'],
    ['0.000', '1.6', '0'],
    ['-1', '0.5', '-0.5'],
    ['0.00000008333333333333334', '1.2', '0.000000100000000000000008'],
  ])('%s × %s = %s', (a, b, expected) => {
    expect(multiplyDecimal(a, b)).toBe(expected);
  });

  it('rejects exponent notation', () => {
    expect(() => multiplyDecimal('1e-7', '1')).toThrow(new RangeError('"1e-7" is not a decimal number'));
  });
});

describe('averageTokenPrice', () => {
  it.each([
    ['plain prices', { prompt: '0.000003', completion: '0.000015' }, 0.000009],
    ['free', { prompt: '0', completion: '0' }, 0],
    ['discount applied', { prompt: '0.000002', completion: '0.000004', discount: 0.5 }, 0.0000015],
    ['router "-1" is unknown', { prompt: '-1', completion: '-1' }, null],
    ['one negative price is unknown', { prompt: '0.000001', completion: '-1' }, null],
    ['malformed is unknown', { prompt: 'abc', completion: '0.000001' }, null],
  ] as const)('%s', (_name, pricing, expected) => {
    expect(averageTokenPrice(pricing)).toBe(expected);
  });
});

describe('validatePricing', () => {
  it('accepts well-formed pricing with every kind of condition', () => {
    const pricing: PublicPricing = {
      prompt: '0.000003',
      completion: '0.000015',
      input_cache_write_1h: '0.000006',
      discount: 0.25,
      overrides: [
        { min_prompt_tokens: 200000, prompt: '0.000006' },
        { utc_start: 2300, utc_end: 100, utc_days: ['saturday', 'sunday'], completion: '0.00001' },
        { utc_start: 0, utc_end: 2400 },
      ],
    };

    expect(validatePricing(pricing)).toEqual([]);
  });

  it('accepts the router variable price "-1"', () => {
    expect(validatePricing({ prompt: '-1', completion: '-1' })).toEqual([]);
  });

  it.each([
    [
      'missing prompt',
      { completion: '0.1' },
      ['pricing.prompt: is required'],
    ],
    [
      'exponent notation',
      { prompt: '1e-7', completion: '0.1' },
      ['pricing.prompt: "1e-7" is not a decimal number'],
    ],
    [
      'a number instead of a string',
      { prompt: '0.1', completion: 0.1 },
      ['pricing.completion: 0.1 must be a decimal string'],
    ],
    [
      'negative price other than "-1"',
      { prompt: '-0.5', completion: '0.1' },
      ['pricing.prompt: "-0.5" is negative (only "-1", a variable price, may be)'],
    ],
    [
      'malformed optional price',
      { prompt: '0.1', completion: '0.1', web_search: '$0.01' },
      ['pricing.web_search: "$0.01" is not a decimal number'],
    ],
    [
      'discount above 1',
      { prompt: '0.1', completion: '0.1', discount: 1.5 },
      ['pricing.discount: 1.5 must be a number between 0 and 1'],
    ],
    [
      'negative discount',
      { prompt: '0.1', completion: '0.1', discount: -0.1 },
      ['pricing.discount: -0.1 must be a number between 0 and 1'],
    ],
    [
      'overrides not an array',
      { prompt: '0.1', completion: '0.1', overrides: {} },
      ['pricing.overrides: must be an array'],
    ],
    [
      'invalid HHMM values',
      { prompt: '0.1', completion: '0.1', overrides: [{ utc_start: 160, utc_end: 2500 }, { utc_start: -100, utc_end: 99.5 }] },
      [
        'pricing.overrides[0].utc_start: 160 is not an HHMM clock time (0 to 2400, minutes below 60)',
        'pricing.overrides[0].utc_end: 2500 is not an HHMM clock time (0 to 2400, minutes below 60)',
        'pricing.overrides[1].utc_start: -100 is not an HHMM clock time (0 to 2400, minutes below 60)',
        'pricing.overrides[1].utc_end: 99.5 is not an HHMM clock time (0 to 2400, minutes below 60)',
      ],
    ],
    [
      'empty window',
      { prompt: '0.1', completion: '0.1', overrides: [{ utc_start: 600, utc_end: 600 }] },
      ['pricing.overrides[0]: utc_start equals utc_end, an empty window that never applies'],
    ],
    [
      'unknown weekday',
      { prompt: '0.1', completion: '0.1', overrides: [{ utc_days: ['monday', 'Tuesday'] }] },
      [
        'pricing.overrides[0].utc_days: "Tuesday" is not a weekday (sunday, monday, tuesday, wednesday, thursday, friday, saturday)',
      ],
    ],
    [
      'empty utc_days',
      { prompt: '0.1', completion: '0.1', overrides: [{ utc_days: [] }] },
      ['pricing.overrides[0].utc_days: must name at least one weekday'],
    ],
    [
      'bad override price and non-overridable key',
      { prompt: '0.1', completion: '0.1', overrides: [{ prompt: 'free', request: '1' }] },
      [
        'pricing.overrides[0].request: is not a price an override may replace',
        'pricing.overrides[0].prompt: "free" is not a decimal number',
      ],
    ],
    [
      'negative min_prompt_tokens',
      { prompt: '0.1', completion: '0.1', overrides: [{ min_prompt_tokens: -1 }] },
      ['pricing.overrides[0].min_prompt_tokens: -1 must be a number ≥ 0'],
    ],
  ])('reports %s', (_name, pricing, expected) => {
    expect(validatePricing(pricing as unknown as PublicPricing)).toEqual(expected);
  });
});

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
